module phased-rollout.local/lua-health

go 1.22

require github.com/yuin/gopher-lua v1.1.1
