package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// secretStore resolves {$secret: ref} from CUA_SECRET_<REF> or a secrets
// file. Values are only read when the dispatcher asks, right before dispatch.
type secretStore struct {
	getenv func(string) string
	file   map[string]string
}

// loadSecretsFile reads a JSON object of ref → value. The file must not be
// readable by group or others (mode 0600 or stricter).
func loadSecretsFile(path string) (map[string]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--secrets: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("--secrets %s: mode %04o is readable by others; chmod 600 it", path, st.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--secrets: %w", err)
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("--secrets %s: want a JSON object of strings: %v", path, err)
	}
	return m, nil
}

// Secret implements runtime.SecretSource.
func (s *secretStore) Secret(ref string) (string, error) {
	if v := s.getenv("CUA_SECRET_" + strings.ToUpper(ref)); v != "" {
		return v, nil
	}
	if v, ok := s.file[ref]; ok && v != "" {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not set (CUA_SECRET_%s or --secrets FILE)", ref, strings.ToUpper(ref))
}
