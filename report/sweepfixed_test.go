package report

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestSweepFixedFieldsAreTheSchemas: the table a sweep point's fixed
// figure fields are written from and a version 1 document's figures read
// through names the fields docs/sweep-schema.json has, in its order, each
// catalog key a catalog figure's; FixedFields writes them in that order.
func TestSweepFixedFieldsAreTheSchemas(t *testing.T) {
	raw, err := os.ReadFile("../docs/sweep-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs struct {
			Point struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"point"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	point := schema.Defs.Point.Properties
	for _, object := range []string{SweepRPS, SweepLatency, SweepHostCPU} {
		// the object's property names in the schema's order
		dec := json.NewDecoder(bytes.NewReader(point[object]))
		var want []string
		for depth := 0; ; {
			tok, err := dec.Token()
			if err != nil {
				t.Fatalf("%s: %v", object, err)
			}
			if d, ok := tok.(json.Delim); ok {
				if d == '{' || d == '[' {
					depth++
				} else {
					depth--
				}
				if depth == 0 {
					break
				}
				continue
			}
			if k, ok := tok.(string); ok && depth == 1 && k == "properties" {
				var props json.RawMessage
				if err := dec.Decode(&props); err != nil {
					t.Fatal(err)
				}
				pd := json.NewDecoder(bytes.NewReader(props))
				pd.Token()
				for pd.More() {
					name, _ := pd.Token()
					want = append(want, name.(string))
					var skip json.RawMessage
					pd.Decode(&skip)
				}
			}
		}
		var got []string
		all := FixedFields{}
		for _, f := range SweepFixedFields {
			if f.Object == object {
				got = append(got, f.Name)
				all[f.Name] = 1.0
			}
		}
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s: table %v, schema %v", object, got, want)
		}
		b, err := json.Marshal(all)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		d := json.NewDecoder(bytes.NewReader(b))
		d.Token()
		for d.More() {
			k, _ := d.Token()
			order = append(order, k.(string))
			d.Token()
		}
		if !slices.Equal(order, want) {
			t.Errorf("%s written as %s", object, b)
		}
	}
	for _, f := range SweepFixedFields {
		if f.Object == "" && point[f.Name] == nil {
			t.Errorf("%s is no field of a point in the schema", f.Name)
		}
		if _, ok := FigureByKey(f.Key); f.Key != "" && !ok {
			t.Errorf("%s: %q is no catalog figure", f.Name, f.Key)
		}
	}
}
