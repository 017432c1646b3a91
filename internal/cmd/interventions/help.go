package interventionscmd

import _ "embed"

//go:embed interventions.txt
var helpInterventions string
