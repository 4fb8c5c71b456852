package record

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// appendRun writes the stored record EncodeRun answers without reflection,
// when every value is one it writes exactly as json.Marshal would: strings
// of printable ASCII that JSON does not escape, an input of ASCII without
// '<', '>' or '&' (compacted, as json.Marshal compacts a json.RawMessage),
// and a time json.Marshal can write (its RFC 3339 text). It answers false
// for anything else, and EncodeRun falls back to json.Marshal.
func appendRun(r *Run) ([]byte, bool) {
	if r.Parent != nil || !plain(r.RunID) || !plain(r.TenantID) || !plain(r.ProjectID) ||
		!plain(r.EnvironmentID) || !plain(r.RunRequestID) || !plain(r.SubmittedBy) ||
		!plain(r.TriggerSource) || !plain(r.PlanSHA256) || !plain(r.TraceParent) || !plain(r.ConcurrencyKey) || !plainInput(r.Input) {
		return nil, false
	}
	b := make([]byte, 0, 384+len(r.Input))
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(r.FormatVersion), 10)
	b = appendField(b, `,"run_id":`, r.RunID)
	b = appendField(b, `,"tenant_id":`, r.TenantID)
	b = appendField(b, `,"project_id":`, r.ProjectID)
	b = appendField(b, `,"environment_id":`, r.EnvironmentID)
	if r.RunRequestID != "" {
		b = appendField(b, `,"run_request_id":`, r.RunRequestID)
	}
	if r.SubmittedBy != "" {
		b = appendField(b, `,"submitted_by":`, r.SubmittedBy)
	}
	if r.TriggerSource != "" {
		b = appendField(b, `,"trigger_source":`, r.TriggerSource)
	}
	if len(r.Input) > 0 {
		b = append(b, `,"input":`...)
		buf := bytes.NewBuffer(b)
		if json.Compact(buf, r.Input) != nil {
			return nil, false
		}
		b = buf.Bytes()
	}
	b = appendField(b, `,"plan_sha256":`, r.PlanSHA256)
	b = append(b, `,"created_at":"`...)
	b, err := r.CreatedAt.AppendText(b) // time.Time.MarshalJSON's text, and its errors
	if err != nil {
		return nil, false
	}
	b = append(b, '"')
	if r.TraceParent != "" {
		b = appendField(b, `,"traceparent":`, r.TraceParent)
	}
	if r.Priority != 0 {
		b = append(b, `,"priority":`...)
		b = strconv.AppendInt(b, int64(r.Priority), 10)
	}
	if r.ConcurrencyKey != "" {
		b = appendField(b, `,"concurrency_key":`, r.ConcurrencyKey)
	}
	return append(b, '}'), true
}

// appendField appends name and the JSON string of s, which is plain.
func appendField(b []byte, name, s string) []byte {
	b = append(b, name...)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plain reports whether json.Marshal writes s as it is between quotes:
// printable ASCII other than '"', '\\' and the HTML characters it escapes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// plainInput reports whether compacting raw is all json.Marshal does to it:
// ASCII without the HTML characters it escapes.
func plainInput(raw []byte) bool {
	for _, c := range raw {
		if c >= 0x80 || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
