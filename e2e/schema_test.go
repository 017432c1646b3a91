package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/schema"
)

var (
	recordSchemaOnce sync.Once
	recordSchema     *jsonschema.Schema
	recordSchemaErr  error
)

// checkRecordSchema validates a run record against the published schema,
// as returned and as written to record.json.
func checkRecordSchema(t *testing.T, rec *domain.RunRecord, dataDir string) {
	t.Helper()
	recordSchemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.RunRecord))
		if err != nil {
			recordSchemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if recordSchemaErr = c.AddResource(schema.RunRecordID, doc); recordSchemaErr != nil {
			return
		}
		recordSchema, recordSchemaErr = c.Compile(schema.RunRecordID)
	})
	if recordSchemaErr != nil {
		t.Fatalf("run record schema: %v", recordSchemaErr)
	}
	raw, _ := json.Marshal(rec)
	docs := map[string][]byte{"returned record": raw}
	if dataDir != "" {
		if file, err := os.ReadFile(filepath.Join(dataDir, "runs", rec.RunID, "record.json")); err == nil {
			docs["record.json"] = file
		} else {
			t.Errorf("no record.json: %v", err)
		}
	}
	for name, b := range docs {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := recordSchema.Validate(doc); err != nil {
			t.Errorf("%s does not satisfy schema/run-record.schema.json: %v", name, err)
		}
	}
}
