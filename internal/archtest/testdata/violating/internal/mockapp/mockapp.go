// Package mockapp wrongly imports the module and a third-party module.
package mockapp

import (
	openai "github.com/openai/openai-go"

	"example.com/violating/internal/domain"
)

var (
	_ openai.Client
	_ domain.Run
)
