{{- define "predictive-scaler.name" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "predictive-scaler.labels" -}}
app.kubernetes.io/name: predictive-scaler
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "predictive-scaler.selector" -}}
app.kubernetes.io/name: predictive-scaler
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "predictive-scaler.weights" -}}
{{- $pairs := list -}}
{{- range $metric, $weight := .Values.rebalance.weights -}}
{{- $pairs = append $pairs (printf "%s=%v" $metric $weight) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}
