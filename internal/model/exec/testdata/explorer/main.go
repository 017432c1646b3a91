// Command explorer is a tiny scripted explorer for the exec adapter's
// tests. It reads a model.Request as JSON on stdin and answers by rule:
// click the first button whose name appears in the goal, or finish. Its
// first argument picks a behaviour:
//
//	envelope  answer {"turn":…,"usage":…,"model":"explorer-1"} (default)
//	bare      answer the bare turn object
//	prose     answer text that is not JSON
//	crash     write to stderr and exit 3
//	hang      never answer
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

type request struct {
	Goal        string `json:"goal"`
	Observation string `json:"observation"`
	Corrective  string `json:"corrective"`
	Screenshot  []byte `json:"screenshot"`
}

type turn struct {
	Action  string `json:"action"`
	Element *int   `json:"element"`
	Reason  string `json:"reason"`
}

var button = regexp.MustCompile(`(?m)^\[(\d+)\] button "([^"]*)"`)

func main() {
	mode := "envelope"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "crash":
		for i := range 200 {
			fmt.Fprintf(os.Stderr, "explorer: noise line %d\n", i)
		}
		fmt.Fprintln(os.Stderr, "explorer: cannot reach the planner")
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
		return
	}

	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "explorer: bad request:", err)
		os.Exit(2)
	}
	t := decide(req)
	if mode == "prose" {
		fmt.Printf("I would %s element %d.\n", t.Action, *t.Element)
		return
	}
	var out any = t
	if mode == "envelope" {
		out = map[string]any{
			"turn":  t,
			"usage": map[string]int{"input_tokens": len(req.Observation), "output_tokens": 7},
			"model": "explorer-1",
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}

func decide(req request) turn {
	if req.Corrective == "" {
		goal := strings.ToLower(req.Goal)
		for _, m := range button.FindAllStringSubmatch(req.Observation, -1) {
			if strings.Contains(goal, strings.ToLower(m[2])) {
				n, _ := strconv.Atoi(m[1])
				return turn{Action: "click", Element: &n, Reason: fmt.Sprintf("the goal names %q (screenshot: %d bytes)", m[2], len(req.Screenshot))}
			}
		}
	}
	zero := 0
	return turn{Action: "finish", Element: &zero, Reason: "nothing left to click"}
}
