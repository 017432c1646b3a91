package domain

import (
	"fmt"
	"log"
)

// Describe prints and logs instead of returning.
func Describe(r Run) string {
	fmt.Println("run", r.Started)
	log.Printf("run %v", r.Started)
	return fmt.Sprint(r.Started)
}
