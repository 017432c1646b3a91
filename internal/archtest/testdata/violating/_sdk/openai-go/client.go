// Package openai stands in for the OpenAI SDK.
package openai

// Client is a fake client.
type Client struct{}
