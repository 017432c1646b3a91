package receipt

import "fmt"

// Schema versions of the four records (the runtime-connector contract's
// names).
const (
	ProfileSchemaVersion = "computer_use_capability_profile_v0"
	PlanSchemaVersion    = "computer_use_action_plan_v0"
	ReceiptSchemaVersion = "computer_use_action_receipt_v0"
	GateSchemaVersion    = "computer_use_handoff_gate_v0"
)

// ConnectorID names cua as the runtime in every record.
const ConnectorID = "cua"

// Host kinds a profile may advertise.
const (
	HostBrowser = "browser"
	HostState   = "state_contract"
	HostDesktop = "desktop"
)

// Profile is the capability profile: a readiness fact about this runtime,
// not a permission to operate any account.
type Profile struct {
	SchemaVersion string       `json:"schema_version"`
	ConnectorID   string       `json:"connector_id"`
	HostKind      string       `json:"host_kind"`
	Visibility    string       `json:"visibility"`
	Capabilities  Capabilities `json:"capabilities"`
	Boundary      Boundary     `json:"boundary"`
}

// Capabilities says what the runtime can do and how.
type Capabilities struct {
	// Screenshots is "masked_in_bundle" (sensitive boxes painted black
	// before encoding, kept in the run's own bundle) or "none".
	Screenshots       string `json:"screenshots"`
	AccessibilityTree string `json:"accessibility_tree"`
	BrowserSession    string `json:"browser_session"`
	RecordReplay      string `json:"record_replay"`
	ExternalWrite     string `json:"external_write"`
	PrivateSourceRead string `json:"private_source_read"`
}

// Boundary is what the runtime never does. Every field is false in a
// valid profile: the schema holds them to false, and Validate refuses a
// profile that claims otherwise.
type Boundary struct {
	CredentialsCopied               bool `json:"credentials_copied"`
	CookiesExported                 bool `json:"cookies_exported"`
	RawScreenshotsCopied            bool `json:"raw_screenshots_copied"`
	RawPrivateBodiesCopied          bool `json:"raw_private_bodies_copied"`
	ExternalWriteAllowedWithoutGate bool `json:"external_write_allowed_without_gate"`
}

// NewProfile is cua's profile on a host of the given kind (HostBrowser,
// HostState or HostDesktop). It returns an error naming host for any
// other kind.
func NewProfile(host string) (Profile, error) {
	p := Profile{
		SchemaVersion: ProfileSchemaVersion, ConnectorID: ConnectorID, HostKind: host, Visibility: "replayable",
		Capabilities: Capabilities{
			Screenshots: "masked_in_bundle", AccessibilityTree: "required", BrowserSession: "isolated_context",
			RecordReplay: "sealed_capabilities", ExternalWrite: "gated", PrivateSourceRead: "gated",
		},
	}
	switch host {
	case HostBrowser:
	case HostState:
		p.Capabilities.Screenshots, p.Capabilities.AccessibilityTree, p.Capabilities.BrowserSession = "none", "state_contract", "none"
	case HostDesktop:
		p.Capabilities.BrowserSession = "none"
	default:
		return Profile{}, fmt.Errorf("receipt: host %q: want %s, %s or %s", host, HostBrowser, HostState, HostDesktop)
	}
	return p, p.Validate()
}

// Validate refuses a profile that copies credentials, cookies, raw
// screenshots or private bodies, or writes externally without a gate,
// naming the first such field.
func (p Profile) Validate() error {
	b := p.Boundary
	for _, f := range []struct {
		name string
		on   bool
	}{
		{"credentials_copied", b.CredentialsCopied}, {"cookies_exported", b.CookiesExported},
		{"raw_screenshots_copied", b.RawScreenshotsCopied}, {"raw_private_bodies_copied", b.RawPrivateBodiesCopied},
		{"external_write_allowed_without_gate", b.ExternalWriteAllowedWithoutGate},
	} {
		if f.on {
			return fmt.Errorf("receipt: profile boundary.%s: must be false", f.name)
		}
	}
	if p.Capabilities.ExternalWrite != "gated" {
		return fmt.Errorf("receipt: profile capabilities.external_write %q: must be gated", p.Capabilities.ExternalWrite)
	}
	return nil
}
