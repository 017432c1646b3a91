package catalog

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/cuahq/cua/internal/domain"
)

// Overlay adapts a base capability to one tenant: where its app lives and
// how a few of its controls are labelled there. The result is a capability
// of its own (version "<base>+<tenant>", its own content hash), approved on
// its own: an approval of the base never covers an overlay.
type Overlay struct {
	// Tenant names the overlay; it becomes the version's build metadata.
	Tenant string
	// BaseURL, when set, replaces {base_url} in the entrypoint and in every
	// navigate step, and becomes the only origin allowed_domains admits.
	BaseURL string
	// Targets relabels steps: step id -> "ROLE:NAME" (exact name match). The
	// step's scope, anchor and ordinal are kept.
	Targets map[string]string
}

var tenantRE = regexp.MustCompile(`^[0-9A-Za-z-]+$`)

// Apply returns the effective capability for o over base, without a
// content hash (the caller seals it). base is not modified.
func (o Overlay) Apply(base *domain.Capability) (*domain.Capability, error) {
	if !tenantRE.MatchString(o.Tenant) {
		return nil, fmt.Errorf("overlay: tenant %q: use letters, digits and '-' only", o.Tenant)
	}
	if strings.Contains(base.Version, "+") {
		return nil, fmt.Errorf("overlay: base %s@%s is itself an overlay; overlay its base", base.ID, base.Version)
	}
	c, err := clone(base)
	if err != nil {
		return nil, err
	}
	c.Version = base.Version + "+" + o.Tenant
	c.ContentHash = ""
	if o.BaseURL != "" {
		if err := o.applyBaseURL(c); err != nil {
			return nil, err
		}
	}
	ids := make([]string, 0, len(o.Targets))
	for id := range o.Targets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := relabel(c, id, o.Targets[id]); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (o Overlay) applyBaseURL(c *domain.Capability) error {
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("overlay: base_url %q: want an origin such as http://127.0.0.1:8811", o.BaseURL)
	}
	origin := u.Scheme + "://" + u.Host
	c.Entrypoint.URLPattern = strings.ReplaceAll(c.Entrypoint.URLPattern, "{base_url}", origin)
	for i := range c.Steps {
		c.Steps[i].URL = strings.ReplaceAll(c.Steps[i].URL, "{base_url}", origin)
	}
	c.Policy.AllowedDomains = []string{origin}
	return nil
}

func relabel(c *domain.Capability, id, spec string) error {
	role, name, ok := strings.Cut(spec, ":")
	role, name = strings.TrimSpace(role), strings.TrimSpace(name)
	if !ok || role == "" || name == "" {
		return fmt.Errorf("overlay: target %s=%q: want ROLE:NAME, e.g. button:Review transfer", id, spec)
	}
	i := slices.IndexFunc(c.Steps, func(s domain.Step) bool { return s.ID == id })
	if i < 0 {
		return fmt.Errorf("overlay: target %s: the capability has no step %q", id, id)
	}
	t := c.Steps[i].Target
	if t == nil {
		return fmt.Errorf("overlay: target %s: step %q has no target to relabel", id, id)
	}
	t.Role = role
	t.Name = &domain.NameMatch{Value: name, Match: domain.MatchExact}
	t.Hints = nil // a cached hint describes the base's label
	return nil
}

// clone deep-copies c through its JSON form.
func clone(c *domain.Capability) (*domain.Capability, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("overlay: copy %s: %w", c.ID, err)
	}
	out := new(domain.Capability)
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("overlay: copy %s: %w", c.ID, err)
	}
	return out, nil
}
