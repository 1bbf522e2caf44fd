// lua-health runs an Argo CD resource health script the way Argo CD does: gopher-lua with the base,
// table, string and math libraries, the object as the global `obj` (JSON converted value by value),
// and the returned table printed as JSON ({"status": ..., "message": ...}).
// Usage: lua-health SCRIPT.lua < objects.jsonl   (one JSON object per line, one result per line)
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	lua "github.com/yuin/gopher-lua"
)

func toLua(l *lua.LState, v interface{}) lua.LValue {
	switch t := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(t)
	case float64:
		return lua.LNumber(t)
	case string:
		return lua.LString(t)
	case []interface{}:
		tbl := l.NewTable()
		for _, e := range t {
			tbl.Append(toLua(l, e))
		}
		return tbl
	case map[string]interface{}:
		tbl := l.NewTable()
		for k, e := range t {
			tbl.RawSetString(k, toLua(l, e))
		}
		return tbl
	}
	return lua.LNil
}

func run(script string, object map[string]interface{}) (map[string]string, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		l.Push(l.NewFunction(lib.fn))
		l.Push(lua.LString(lib.name))
		l.Call(1, 0)
	}
	l.SetGlobal("obj", toLua(l, object))
	if err := l.DoString(script); err != nil {
		return nil, err
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("the script returned %s, not a table", l.Get(-1).Type())
	}
	out := map[string]string{}
	ret.ForEach(func(k, v lua.LValue) { out[k.String()] = v.String() })
	return out, nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: lua-health SCRIPT.lua < objects.jsonl")
		os.Exit(2)
	}
	script, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	enc := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var object map[string]interface{}
		if err := json.Unmarshal(in.Bytes(), &object); err != nil {
			fmt.Fprintln(os.Stderr, "bad object:", err)
			os.Exit(2)
		}
		res, err := run(string(script), object)
		if err != nil {
			_ = enc.Encode(map[string]string{"error": err.Error()})
			continue
		}
		_ = enc.Encode(res)
	}
}
