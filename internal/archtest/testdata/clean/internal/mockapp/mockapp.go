// Package mockapp is the hostile back-office app.
package mockapp

import "net/http"

// Handler serves the app.
var Handler = http.NotFoundHandler()
