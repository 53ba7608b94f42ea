package capacity

import (
	"encoding/json"
	"gab/report"
	"os"
	"strings"
	"testing"
	"time"
)

// A document with every field set matches docs/capacity-schema.json: each
// key is one the schema names, each required key is there, each enum holds.
func TestDocumentMatchesSchema(t *testing.T) {
	raw, err := os.ReadFile("../../docs/capacity-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	d := fixture()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(b); err != nil {
		t.Fatal(err)
	}
	defs := schema["$defs"].(map[string]any)
	var check func(s map[string]any, v any, path string)
	check = func(s map[string]any, v any, path string) {
		if ref, ok := s["$ref"].(string); ok {
			check(defs[ref[strings.LastIndexByte(ref, '/')+1:]].(map[string]any), v, path)
			return
		}
		if enum, ok := s["enum"].([]any); ok {
			found := false
			for _, e := range enum {
				found = found || e == v
			}
			if !found {
				t.Errorf("%s: %v is none of %v", path, v, enum)
			}
		}
		switch s["type"] {
		case "object":
			m, _ := v.(map[string]any)
			props, _ := s["properties"].(map[string]any)
			for _, r := range s["required"].([]any) {
				if _, ok := m[r.(string)]; !ok {
					t.Errorf("%s: no %s", path, r)
				}
			}
			for k, x := range m {
				ps, ok := props[k].(map[string]any)
				if !ok {
					t.Errorf("%s.%s: not in the schema", path, k)
					continue
				}
				check(ps, x, path+"."+k)
			}
		case "array":
			a, _ := v.([]any)
			for _, x := range a {
				check(s["items"].(map[string]any), x, path+"[]")
			}
		}
	}
	check(schema, doc, "$")
}

// fixture is a document with every field set: a search that passed 100/s
// and was client-bound at 200/s, and one interrupted after failing 400/s.
func fixture() *report.CapacityDocument {
	s := Search{Start: 100, Resolution: 0.05}
	s.Record(report.CapacityStep{TargetPerS: 100, Connections: 2, Kept: true, Pass: true, Objectives: []string{"p99<1s: passed"}})
	s.Record(report.CapacityStep{TargetPerS: 200, Connections: 2, ClientBound: true, ClientReasons: []string{"x"}, Error: "e", AtMaxConnections: true})
	s.Record(report.CapacityStep{TargetPerS: 200, Connections: 2, ClientBound: true, ClientReasons: []string{"x"}})
	tg := &report.CapacityTarget{Label: "a", URL: "http://127.0.0.1/",
		Noise: NoiseOf(25, []report.CapacityStep{{TargetPerS: 25, Connections: 2, P50Us: 1, P99Us: 2, P999Us: 3, Kept: true, Pass: true}, {TargetPerS: 25, Connections: 2, P99Us: 9, P999Us: 9}})}
	s2 := Search{Start: 400, Resolution: 0.05}
	s2.Record(report.CapacityStep{TargetPerS: 400, Connections: 3, P50Us: 1, P99Us: 2, P999Us: 3, Complete: 10, Failed: 1, Non2xx: 2})
	s2.Interrupt()
	tg2 := &report.CapacityTarget{Label: "b", URL: "http://127.0.0.1/b"}
	Finish(tg, s)
	Finish(tg2, s2)
	Rank([]*report.CapacityTarget{tg, tg2})
	d := &report.CapacityDocument{Tool: "gab", Schema: Schema, SchemaVersion: SchemaVersion, CommandLine: []string{"gab"}, Start: time.Now(), End: time.Now(),
		Complete: true, Objectives: []string{"p99<1s"}, LatencyObjectiveMs: 1000, StepS: 1, SettleS: 0.2, ResolutionPercent: 5,
		MinAchieved: MinAchieved, MaxConnections: 256, Repeat: 1, Attempts: 2, TieRule: "t",
		Machine: report.CapacityMachine{CPUs: 2, Cores: 2, LoadStart: []float64{1, 2, 3}, LoadEnd: []float64{1, 2, 3}}, Targets: []*report.CapacityTarget{tg, tg2}}
	d.Targets[0].Runs[0].Result.FailingPerS = 200
	return d
}
