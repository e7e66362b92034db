package main

import (
	"testing"
)

func TestParseStatusJSON(t *testing.T) {
	tests := []struct {
		in       string
		complete bool
		progress string
		worked   string
		wantErr  bool
	}{
		{`{"complete":true,"progress":{"completed":3,"total":3}}`, true, "3/3", "", false},
		{`{"progress":{"completed":4,"total":3}}`, false, "4/4", "", false},
		{`{"complete":false,"worked":false,"summary":"nothing"}`, false, "-", "false", false},
		{`{"complete":"yes"}`, false, "", "", true},
		{`{"complete":1}`, false, "", "", true},
		{`{"progress":{"completed":1}}`, false, "-", "", false},
		{`{"progress":{"completed":-1,"total":2}}`, false, "", "", true},
		{`{"extra":"fields","are":["fine"]}`, false, "-", "", false},
		{``, false, "", "", true},
		{`{"complete":tr`, false, "", "", true},
		{`[]`, false, "", "", true},
	}
	for _, tt := range tests {
		ts, err := parseStatusJSON([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("parseStatusJSON(%s) error = %v; want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if ts.Complete != tt.complete || ts.progressText() != tt.progress {
			t.Errorf("parseStatusJSON(%s) = complete %v, progress %s; want %v, %s", tt.in, ts.Complete, ts.progressText(), tt.complete, tt.progress)
		}
		worked := ""
		if ts.Worked != nil {
			worked = map[bool]string{true: "true", false: "false"}[*ts.Worked]
		}
		if worked != tt.worked {
			t.Errorf("parseStatusJSON(%s).Worked = %q; want %q", tt.in, worked, tt.worked)
		}
	}
}

func TestParseTODO(t *testing.T) {
	tests := []struct {
		in          string
		done, total int
	}{
		{"- [x] a\n- [ ] b\n", 1, 2},
		{"* [X] a\n+ [ ] b\n  - [x] nested\n", 2, 3},
		{"- [] not a box\n-[x] no space\n", 0, 0},
		{"# Title\nprose [x] here\n", 0, 0},
		{"", 0, 0},
	}
	for _, tt := range tests {
		done, total := parseTODO([]byte(tt.in))
		if done != tt.done || total != tt.total {
			t.Errorf("parseTODO(%q) = %d/%d; want %d/%d", tt.in, done, total, tt.done, tt.total)
		}
	}
}

func FuzzParseStatusJSON(f *testing.F) {
	f.Add([]byte(`{"complete":true,"progress":{"completed":3,"total":3},"worked":true,"summary":"s"}`))
	f.Add([]byte(`{"complete":false}`))
	f.Add([]byte(`- [x] a`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := parseStatusJSON(data)
		if err == nil && ts.HasProgress && (ts.Completed < 0 || ts.Total < 0) {
			t.Fatalf("negative progress accepted: %+v", ts)
		}
		parseTODO(data)
	})
}
