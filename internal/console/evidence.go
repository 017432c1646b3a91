package console

import (
	"encoding/json"
	"fmt"

	"github.com/cuahq/cua/internal/evidence"
	"github.com/cuahq/cua/internal/runtime"
)

// byPrincipal is an event sink that names the principal in the data of
// every event it passes on ("principal": NAME), so each human event of a
// bundle says which signed-in person did it, not only that a person did.
type byPrincipal struct {
	sink      runtime.EventSink
	principal string
}

// Append adds the principal to e's data and appends it.
func (b byPrincipal) Append(e evidence.Event) error {
	if e.Payload != nil {
		e.Payload = principalPayload{Payload: e.Payload, principal: b.principal}
		return b.sink.Append(e)
	}
	data := make(map[string]any, len(e.Data)+1)
	for k, v := range e.Data {
		data[k] = v
	}
	data["principal"] = b.principal
	e.Data = data
	return b.sink.Append(e)
}

// principalPayload is a payload whose JSON object also holds "principal".
type principalPayload struct {
	evidence.Payload
	principal string
}

// MarshalJSON encodes the payload's own object with "principal" added.
func (p principalPayload) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(p.Payload)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("console: %s event is not a JSON object: %w", p.EventType(), err)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	name, _ := json.Marshal(p.principal)
	m["principal"] = name
	return json.Marshal(m)
}
