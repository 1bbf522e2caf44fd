{{/* fullname: the prefix of every object name. */}}
{{- define "pr.fullname" -}}
{{- default "phased-rollout" .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* labels: common labels of every object. */}}
{{- define "pr.labels" -}}
app.kubernetes.io/part-of: phased-rollout
{{- if .Values.helmLabels }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}
{{- end -}}

{{/* image: repository:tag, the tag defaulting to the chart's appVersion. */}}
{{- define "pr.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}

{{/* controllerUser: the username the controller's requests carry (webhook row 3, matchConditions). */}}
{{- define "pr.controllerUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "pr.fullname" . }}-controller
{{- end -}}

{{/* ourAnnotationsChanged: CEL, true when an UPDATE adds, removes or changes a phased-rollout.io/ annotation. */}}
{{- define "pr.ourAnnotationsChanged" -}}
(has(object.metadata.annotations) && object.metadata.annotations.exists(k, k.startsWith('phased-rollout.io/') &&
!(has(oldObject.metadata.annotations) && k in oldObject.metadata.annotations && oldObject.metadata.annotations[k] == object.metadata.annotations[k]))) ||
(has(oldObject.metadata.annotations) && oldObject.metadata.annotations.exists(k, k.startsWith('phased-rollout.io/') &&
!(has(object.metadata.annotations) && k in object.metadata.annotations)))
{{- end -}}

{{/* tlsSecret: the Secret holding the webhook's serving pair. */}}
{{- define "pr.tlsSecret" -}}
{{ include "pr.fullname" . }}-webhook-tls
{{- end -}}

{{/* namespaceSelector: what the webhook and the OnDelete policy see. */}}
{{- define "pr.namespaceSelector" -}}
{{- with .Values.namespaceSelector.matchLabels }}
matchLabels:
  {{- toYaml . | nindent 2 }}
{{- end }}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: {{ concat (list .Release.Namespace "kube-system") .Values.namespaceSelector.excludeNamespaces | uniq | toJson }}
{{- end -}}

{{/* podSecurity: the pod-level security context both processes run with. */}}
{{- define "pr.podSecurity" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  seccompProfile: {type: RuntimeDefault}
{{- end -}}

{{/* containerSecurity: the container-level security context both processes run with. */}}
{{- define "pr.containerSecurity" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities: {drop: ["ALL"]}
{{- end -}}

{{/* probes: readiness and liveness on the metrics port. */}}
{{- define "pr.probes" -}}
readinessProbe:
  httpGet: {path: /readyz, port: metrics}
  periodSeconds: 5
livenessProbe:
  httpGet: {path: /healthz, port: metrics}
  periodSeconds: 10
{{- end -}}

{{/* scheduling: nodeSelector, tolerations and affinity of one component's values. */}}
{{- define "pr.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* tlsMode: certManager, generate or existingSecret. */}}
{{- define "pr.tlsMode" -}}
{{- if .Values.certManager.enabled -}}certManager{{- else if eq .Values.tls.mode "existingSecret" -}}existingSecret{{- else if eq .Values.tls.mode "generate" -}}generate{{- else -}}{{ fail (printf "tls.mode must be generate or existingSecret, not %q" .Values.tls.mode) }}{{- end -}}
{{- end -}}

{{/*
generatedTls: the serving pair and CA of mode "generate", as JSON {crt, key, ca} (base64). An existing
Secret is reused, so `helm upgrade` never rotates the pair under running webhooks (the caBundle and the
mounted files would disagree until the kubelet syncs the volume). Computed once per render.
*/}}
{{- define "pr.generatedTls" -}}
{{- if not .Values._generatedTls -}}
{{- $secret := lookup "v1" "Secret" .Release.Namespace (include "pr.tlsSecret" .) -}}
{{- if and $secret $secret.data (index $secret.data "tls.crt") (index $secret.data "ca.crt") -}}
{{- $_ := set .Values "_generatedTls" (dict "crt" (index $secret.data "tls.crt") "key" (index $secret.data "tls.key") "ca" (index $secret.data "ca.crt")) -}}
{{- else -}}
{{- $svc := printf "%s-webhook" (include "pr.fullname" .) -}}
{{- $ca := genCA (printf "%s-ca" (include "pr.fullname" .)) (int .Values.tls.validityDays) -}}
{{- $dns := list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.cluster.local" $svc .Release.Namespace) -}}
{{- $cert := genSignedCert (printf "%s.%s.svc" $svc .Release.Namespace) nil $dns (int .Values.tls.validityDays) $ca -}}
{{- $_ := set .Values "_generatedTls" (dict "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc) "ca" ($ca.Cert | b64enc)) -}}
{{- end -}}
{{- end -}}
{{- toJson .Values._generatedTls -}}
{{- end -}}

{{/* caBundle: the CA the API server trusts for the webhook, when the chart knows it. */}}
{{- define "pr.caBundle" -}}
{{- $mode := include "pr.tlsMode" . -}}
{{- if eq $mode "generate" -}}{{ (include "pr.generatedTls" . | fromJson).ca }}{{- else if eq $mode "existingSecret" -}}{{ .Values.tls.caBundle }}{{- end -}}
{{- end -}}

{{/* metricsIngress: the NetworkPolicy ingress rule of a metrics port (8080), or nothing when no namespace is named. */}}
{{- define "pr.metricsIngress" -}}
{{- with .Values.networkPolicy.metricsNamespaces -}}
- from:
    {{- range . }}
    - namespaceSelector:
        matchLabels: {kubernetes.io/metadata.name: {{ . | quote }}}
      {{- with $.Values.networkPolicy.metricsPodLabels }}
      podSelector:
        matchLabels: {{- toYaml . | nindent 10 }}
      {{- end }}
    {{- end }}
  ports:
    - {protocol: TCP, port: 8080}
{{- end }}
{{- end -}}
