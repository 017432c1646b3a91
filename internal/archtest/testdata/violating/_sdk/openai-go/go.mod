module github.com/openai/openai-go

go 1.26
