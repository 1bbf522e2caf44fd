{{- /*
The Pod Security Standards' "baseline" checks as CEL, for the ValidatingAdmissionPolicies on what the
controller writes (job-policy.yaml: its Jobs; statefulset-policy.yaml: a rollback's pod template). Each
takes a PodTemplateSpec's CEL expression (object.spec.template, oldObject.spec.template) and is true when
that template passes the check. A ValidatingAdmissionPolicy reads the object in the request, never
another one, so these are written out here rather than borrowed from the namespace's Pod Security label.
*/ -}}

{{- /* pr.eachContainer: `cond` (on `c`) holds for every container, init and ephemeral container; each list on its own, they are different types to CEL. */ -}}
{{- define "pr.eachContainer" -}}
{{- $d := . -}}
{{- $each := list -}}
{{- range $f := list "containers" "initContainers" "ephemeralContainers" -}}
{{- $each = append $each (printf "(!has(%s.spec.%s) || %s.spec.%s.all(c, %s))" $d.t $f $d.t $f $d.cond) -}}
{{- end -}}
{{- join "\n&& " $each -}}
{{- end -}}

{{- /* pr.ps.hostNamespaces: no hostNetwork, hostPID, hostIPC. */ -}}
{{- define "pr.ps.hostNamespaces" -}}
!(has({{ . }}.spec.hostNetwork) && {{ . }}.spec.hostNetwork) &&
!(has({{ . }}.spec.hostPID) && {{ . }}.spec.hostPID) &&
!(has({{ . }}.spec.hostIPC) && {{ . }}.spec.hostIPC)
{{- end -}}

{{- /* pr.ps.privileged: no privileged container. */ -}}
{{- define "pr.ps.privileged" -}}
{{ include "pr.eachContainer" (dict "t" . "cond" "!(has(c.securityContext) && has(c.securityContext.privileged) && c.securityContext.privileged)") }}
{{- end -}}

{{- /* pr.ps.hostProcess: no Windows HostProcess pod or container. */ -}}
{{- define "pr.ps.hostProcess" -}}
!(has({{ . }}.spec.securityContext) && has({{ . }}.spec.securityContext.windowsOptions) && has({{ . }}.spec.securityContext.windowsOptions.hostProcess) && {{ . }}.spec.securityContext.windowsOptions.hostProcess) &&
{{ include "pr.eachContainer" (dict "t" . "cond" "!(has(c.securityContext) && has(c.securityContext.windowsOptions) && has(c.securityContext.windowsOptions.hostProcess) && c.securityContext.windowsOptions.hostProcess)") }}
{{- end -}}

{{- /* pr.ps.capabilities: capabilities.add holds only the baseline's list (no ALL, no SYS_ADMIN, no NET_ADMIN...). */ -}}
{{- define "pr.ps.capabilities" -}}
{{ include "pr.eachContainer" (dict "t" . "cond" "!(has(c.securityContext) && has(c.securityContext.capabilities) && has(c.securityContext.capabilities.add)) || c.securityContext.capabilities.add.all(a, a in ['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT'])") }}
{{- end -}}

{{- /* pr.ps.hostPorts: no container port bound on the node. */ -}}
{{- define "pr.ps.hostPorts" -}}
{{ include "pr.eachContainer" (dict "t" . "cond" "!has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0)") }}
{{- end -}}

{{- /* pr.ps.procMount: /proc masked as usual (Default). */ -}}
{{- define "pr.ps.procMount" -}}
{{ include "pr.eachContainer" (dict "t" . "cond" "!(has(c.securityContext) && has(c.securityContext.procMount)) || c.securityContext.procMount == 'Default'") }}
{{- end -}}

{{- /* pr.ps.seccomp: no Unconfined seccomp profile, for the pod or a container. */ -}}
{{- define "pr.ps.seccomp" -}}
!(has({{ . }}.spec.securityContext) && has({{ . }}.spec.securityContext.seccompProfile) && {{ . }}.spec.securityContext.seccompProfile.type == 'Unconfined') &&
{{ include "pr.eachContainer" (dict "t" . "cond" "!(has(c.securityContext) && has(c.securityContext.seccompProfile) && c.securityContext.seccompProfile.type == 'Unconfined')") }}
{{- end -}}

{{- /* pr.ps.appArmor: no Unconfined AppArmor profile: the fields, and the older per-container annotations (still honoured). */ -}}
{{- define "pr.ps.appArmor" -}}
!(has({{ . }}.spec.securityContext) && has({{ . }}.spec.securityContext.appArmorProfile) && {{ . }}.spec.securityContext.appArmorProfile.type == 'Unconfined') &&
{{ include "pr.eachContainer" (dict "t" . "cond" "!(has(c.securityContext) && has(c.securityContext.appArmorProfile) && c.securityContext.appArmorProfile.type == 'Unconfined')") }} &&
(!has({{ . }}.metadata) || !has({{ . }}.metadata.annotations) || {{ . }}.metadata.annotations.all(k, !k.startsWith('container.apparmor.security.beta.kubernetes.io/') || {{ . }}.metadata.annotations[k] == 'runtime/default' || {{ . }}.metadata.annotations[k].startsWith('localhost/')))
{{- end -}}

{{- /* pr.ps.seLinux: SELinux type among the container types, no user or role. */ -}}
{{- define "pr.ps.seLinux" -}}
{{- $ok := "(!has(X.securityContext) || !has(X.securityContext.seLinuxOptions) || ((!has(X.securityContext.seLinuxOptions.type) || X.securityContext.seLinuxOptions.type in ['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']) && (!has(X.securityContext.seLinuxOptions.user) || X.securityContext.seLinuxOptions.user == '') && (!has(X.securityContext.seLinuxOptions.role) || X.securityContext.seLinuxOptions.role == '')))" -}}
{{ replace "X" (printf "%s.spec" .) $ok }} &&
{{ include "pr.eachContainer" (dict "t" . "cond" (replace "X" "c" $ok)) }}
{{- end -}}

{{- /* pr.ps.sysctls: only the sysctls the baseline counts safe (namespaced, and limited to the pod). */ -}}
{{- define "pr.ps.sysctls" -}}
!has({{ . }}.spec.securityContext) || !has({{ . }}.spec.securityContext.sysctls) ||
{{ . }}.spec.securityContext.sysctls.all(s, s.name in ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.ip_unprivileged_port_start', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes'])
{{- end -}}
