// Package perception wrongly holds a model SDK.
package perception

import openai "github.com/openai/openai-go"

// Client is a model client.
var Client openai.Client
