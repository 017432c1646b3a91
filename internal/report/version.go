package report

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/cuahq/cua/internal/domain"
)

// BuildVersion is the build's version: override when the build set one
// (-ldflags -X), else "dev+<revision>" from the VCS stamp, else the module
// version, else "dev".
func BuildVersion(override string) string {
	if override != "" {
		return override
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev+" + s.Value[:12]
			}
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
	}
	return "dev"
}

// VersionInfo is what `cua version --json` prints.
type VersionInfo struct {
	SchemaVersion           int    `json:"schema_version"`
	Version                 string `json:"version"`
	Go                      string `json:"go"`
	CapabilitySchemaVersion int    `json:"capability_schema_version"`
}

// Version describes this build with version v.
func Version(v string, schemaVersion int) VersionInfo {
	return VersionInfo{SchemaVersion: schemaVersion, Version: v, Go: runtime.Version(), CapabilitySchemaVersion: domain.SchemaVersion}
}

// Line writes the one-line form: "cua v (go, capability schema N)".
func (v VersionInfo) Line(w io.Writer) error {
	_, err := fmt.Fprintf(w, "cua %s (%s, capability schema %d)\n", v.Version, v.Go, v.CapabilitySchemaVersion)
	return err
}
