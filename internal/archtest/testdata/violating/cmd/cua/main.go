// Command cua wrongly skips cli.
package main

import "example.com/violating/internal/domain"

func main() { _ = domain.NewRun() }
