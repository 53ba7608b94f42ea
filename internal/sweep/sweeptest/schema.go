// Package sweeptest validates gab sweep's JSON documents against their schema
// (docs/sweep-schema.json, which refers to docs/json-schema.json for the run
// documents inside), for tests. It uses santhosh-tekuri/jsonschema, a full
// draft 2020-12 validator, so that the schemas themselves are checked too.
package sweeptest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validate checks the JSON document raw against the sweep schema in docsDir.
func Validate(raw []byte, docsDir string) error {
	c := jsonschema.NewCompiler()
	for _, name := range []string{"json-schema.json", "sweep-schema.json"} {
		f, err := os.Open(filepath.Join(docsDir, name))
		if err != nil {
			return err
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		if err := c.AddResource("https://gab.invalid/"+name, doc); err != nil {
			return err
		}
	}
	sch, err := c.Compile("https://gab.invalid/sweep-schema.json")
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}
