// Package extra is not in the table.
package extra
