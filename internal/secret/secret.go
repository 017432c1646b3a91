// Package secret holds the secret values a run may type and keeps them in
// this process: it moves CUA_SECRET_* variables out of the environment at
// start ([TakeEnv]), resolves {$secret: ref} from them or a secrets file
// ([Store]), and scans files for key-shaped strings and registered secret
// values ([Scan]).
//
// It never prints, logs or returns a secret value in an error or a
// finding, never reads flags, and never passes a value to a child process.
package secret

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/cuahq/cua/internal/capability"
)

// EnvPrefix starts every environment variable holding a secret.
const EnvPrefix = "CUA_SECRET_"

// taken holds the CUA_SECRET_* variables TakeEnv moved out of the
// environment (the environment is process-wide, so this is too).
var taken = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// TakeEnv moves every CUA_SECRET_* variable out of this process's
// environment into memory and returns them (name → value). After it, no
// child started by os/exec (Chromium, an exec: model) can inherit them,
// whatever environment it is given.
func TakeEnv() map[string]string {
	taken.Lock()
	defer taken.Unlock()
	out := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, EnvPrefix) {
			continue
		}
		out[k] = v
		taken.m[k] = v
		os.Unsetenv(k)
	}
	return out
}

// Environ is os.Environ() with the variables TakeEnv removed, for listing
// which secret refs are set.
func Environ() []string {
	taken.Lock()
	defer taken.Unlock()
	out := os.Environ()
	names := make([]string, 0, len(taken.m))
	for k := range taken.m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, k+"="+taken.m[k])
	}
	return out
}

// EnvValues lists the non-empty values TakeEnv removed, sorted.
func EnvValues() []string {
	taken.Lock()
	defer taken.Unlock()
	var out []string
	for _, v := range taken.m {
		if v != "" {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// Store resolves {$secret: ref} from CUA_SECRET_<REF> or a secrets file.
// Values are only read when the dispatcher asks, right before dispatch.
// It implements runtime.SecretSource and is safe for concurrent use.
type Store struct {
	getenv func(string) string
	file   map[string]string
}

// NewStore returns a Store reading the environment through getenv and,
// when file is not empty, the secrets file at that path (see [LoadFile]).
func NewStore(getenv func(string) string, file string) (*Store, error) {
	s := &Store{getenv: getenv}
	if file == "" {
		return s, nil
	}
	m, err := LoadFile(file)
	if err != nil {
		return nil, err
	}
	s.file = m
	return s, nil
}

// LoadFile reads a JSON object of ref → value. The file must not be
// readable by group or others (mode 0600 or stricter), must be a regular
// file and at most capability.MaxSecretsSize bytes. Errors start with
// "--secrets", the option that names such a file everywhere.
func LoadFile(path string) (map[string]string, error) {
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

// Secret implements runtime.SecretSource. The error names the variable and
// the option that would set ref, never a value.
func (s *Store) Secret(ref string) (string, error) {
	if v := s.getenv(EnvPrefix + strings.ToUpper(ref)); v != "" {
		return v, nil
	}
	if v, ok := s.file[ref]; ok && v != "" {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not set (CUA_SECRET_%s or --secrets FILE)", ref, strings.ToUpper(ref))
}

// Values lists the values of the secrets file, for a scan's canaries.
func (s *Store) Values() []string {
	out := make([]string, 0, len(s.file))
	for _, v := range s.file {
		out = append(out, v)
	}
	return out
}

// Names lists the secret refs a model may type: those set in environ
// (CUA_SECRET_<REF>, lower-cased) and in the secrets file, sorted. Values
// never leave the store.
func (s *Store) Names(environ []string) []string {
	set := map[string]bool{}
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if ref, ok := strings.CutPrefix(k, EnvPrefix); ok && ref != "" {
			set[strings.ToLower(ref)] = true
		}
	}
	for k := range s.file {
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
