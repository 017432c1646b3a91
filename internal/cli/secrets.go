package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/cuahq/cua/internal/capability"
)

// SecretEnvPrefix starts every environment variable holding a secret.
const SecretEnvPrefix = "CUA_SECRET_"

// envSecrets holds the CUA_SECRET_* variables taken out of the environment.
var envSecrets = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// takeSecretEnv moves every CUA_SECRET_* variable out of this process's
// environment into memory and returns them (name → value). After it, no
// child started by os/exec (Chromium, an exec: model) can inherit them,
// whatever environment it is given.
func takeSecretEnv() map[string]string {
	envSecrets.Lock()
	defer envSecrets.Unlock()
	taken := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, SecretEnvPrefix) {
			continue
		}
		taken[k] = v
		envSecrets.m[k] = v
		os.Unsetenv(k)
	}
	return taken
}

// secretEnviron is os.Environ() with the CUA_SECRET_* variables that
// takeSecretEnv removed, for code listing which secret refs are set.
func secretEnviron() []string {
	envSecrets.Lock()
	defer envSecrets.Unlock()
	out := os.Environ()
	names := make([]string, 0, len(envSecrets.m))
	for k := range envSecrets.m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, k+"="+envSecrets.m[k])
	}
	return out
}

// registeredSecretValues lists the secret values cua knows at start: the
// CUA_SECRET_* variables taken from the environment.
func registeredSecretValues() []string {
	envSecrets.Lock()
	defer envSecrets.Unlock()
	var out []string
	for _, v := range envSecrets.m {
		if v != "" {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// secretStore resolves {$secret: ref} from CUA_SECRET_<REF> or a secrets
// file. Values are only read when the dispatcher asks, right before dispatch.
type secretStore struct {
	getenv func(string) string
	file   map[string]string
}

// loadSecretsFile reads a JSON object of ref → value. The file must not be
// readable by group or others (mode 0600 or stricter), must be a regular
// file and at most capability.MaxSecretsSize bytes.
func loadSecretsFile(path string) (map[string]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--secrets: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("--secrets %s: mode %04o is readable by others; chmod 600 it", path, st.Mode().Perm())
	}
	raw, err := capability.ReadBounded(path, capability.MaxSecretsSize)
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
	if v := s.getenv(SecretEnvPrefix + strings.ToUpper(ref)); v != "" {
		return v, nil
	}
	if v, ok := s.file[ref]; ok && v != "" {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not set (CUA_SECRET_%s or --secrets FILE)", ref, strings.ToUpper(ref))
}
