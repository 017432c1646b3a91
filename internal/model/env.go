package model

import (
	"strings"
)

// Environment variables every hosted adapter reads.
const (
	EnvBaseURL = "CUA_LLM_BASE_URL"
	EnvModel   = "CUA_LLM_MODEL"
	EnvAPIKey  = "CUA_LLM_API_KEY"
)

// Settings are a hosted provider's connection settings.
type Settings struct {
	BaseURL string
	Model   string
	APIKey  string
}

// SettingsFromEnv resolves a hosted adapter's settings: the model is
// modelFlag, else CUA_LLM_MODEL, else defaultModel; the base URL is
// baseURLFlag, else CUA_LLM_BASE_URL, else defaultBaseURL; the key is
// CUA_LLM_API_KEY, else the provider's own variable (providerKey). Without
// a key it returns [NoKey]'s error, which names the provider's variable
// first.
func SettingsFromEnv(getenv func(string) string, providerKey, modelFlag, baseURLFlag, defaultModel, defaultBaseURL string) (Settings, error) {
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	key := FirstNonEmpty(env(EnvAPIKey), env(providerKey))
	if key == "" {
		return Settings{}, NoKey(providerKey)
	}
	return Settings{
		BaseURL: FirstNonEmpty(baseURLFlag, env(EnvBaseURL), defaultBaseURL),
		Model:   FirstNonEmpty(modelFlag, env(EnvModel), defaultModel),
		APIKey:  key,
	}, nil
}

// FirstNonEmpty returns the first of vs that is not blank, trimmed.
func FirstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
