module example.com/violating

go 1.26

require github.com/openai/openai-go v1.0.0

replace github.com/openai/openai-go => ./_sdk/openai-go
