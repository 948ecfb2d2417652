// stepfold: copied into FerretDB v1's SQLite backend (package sqlite) when scripts/services builds
// scripts/ferretdb; not part of the stepfold.local module (Go skips folders starting with "_").

package sqlite

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/handler/sjson"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// Most ids one `$in` puts in SQL; a longer list is left to the handler's own filter.
const maxPushedIDs = 1000

// Top-level field names a range is pushed down for: a plain label, so `->>` reads `$.name` and
// the expression is spelled as the index spells it.
var plainField = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// filterWhere returns a WHERE clause (empty for none) that keeps at least every document the
// filter matches, its arguments, and whether it keeps exactly those. The handler filters every
// row again, so a clause may keep more than the filter does, never less.
//
// Pushed down, ANDed as the filter's top-level fields are:
//   - `_id` equal to a string or ObjectID, or `_id: {$in: [...]}` of those: the `_id` index;
//   - a number bound `$lt`, `$lte`, `$gt`, `$gte` on a top-level field: the range on that
//     field's `->>` index expression (see indexesCreate).
//
// A bound from above also keeps every TEXT value (`>= ''`): arrays, documents and strings read as
// TEXT through `->>`, and an array may hold a number in range. Numbers sort below TEXT in SQLite,
// so a bound from below keeps them anyway. Both halves are ranges on one expression, so SQLite
// answers the pair with two index searches.
func filterWhere(filter *types.Document) (string, []any, bool) {
	if filter.Len() == 0 {
		return "", nil, false
	}
	if _, dup := filter.FindDuplicateKey(); dup {
		return "", nil, false
	}

	var conds []string
	var args []any
	exact := true

	keys, values := filter.Keys(), filter.Values()
	for i, key := range keys {
		if key == "_id" {
			c, a, ok := idCondition(values[i])
			if ok {
				conds, args = append(conds, c), append(args, a...)
				continue
			}
		} else if plainField.MatchString(key) {
			if ops, isDoc := values[i].(*types.Document); isDoc {
				c, a := rangeConditions(key, ops)
				conds, args = append(conds, c...), append(args, a...)
			}
		}
		exact = false
	}

	if len(conds) == 0 {
		return "", nil, false
	}

	return " WHERE " + strings.Join(conds, " AND "), args, exact
}

// idCondition pushes down `_id` equality or `$in`, spelled as the `_id` index is.
func idCondition(v any) (string, []any, bool) {
	switch v := v.(type) {
	case string, types.ObjectID:
		return metadata.IDColumn + " = ?", []any{sjsonArg(v)}, true
	case *types.Document:
		if v.Len() != 1 || v.Keys()[0] != "$in" {
			return "", nil, false
		}
		list, ok := must.NotFail(v.Get("$in")).(*types.Array)
		if !ok || list.Len() == 0 || list.Len() > maxPushedIDs {
			return "", nil, false
		}
		args := make([]any, list.Len())
		for i := range args {
			switch id := must.NotFail(list.Get(i)).(type) {
			case string, types.ObjectID:
				args[i] = sjsonArg(id)
			default:
				return "", nil, false // a regex or another type: matched by the handler only
			}
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(args)), ", ")
		return fmt.Sprintf("%s IN (%s)", metadata.IDColumn, marks), args, true
	}

	return "", nil, false
}

// rangeConditions pushes down the number bounds among a field's operators; others are left to the
// handler.
func rangeConditions(field string, ops *types.Document) ([]string, []any) {
	column := fmt.Sprintf("%s->>%q", metadata.DefaultColumn, field)

	var conds []string
	var args []any

	keys, values := ops.Keys(), ops.Values()
	for i, op := range keys {
		var sql string
		switch op {
		case "$lt":
			sql = "<"
		case "$lte":
			sql = "<="
		case "$gt":
			sql = ">"
		case "$gte":
			sql = ">="
		default:
			continue
		}

		bound, ok := numberArg(values[i])
		if !ok {
			continue
		}

		if sql[0] == '<' {
			conds = append(conds, fmt.Sprintf("(%[1]s %[2]s ? OR %[1]s >= '')", column, sql))
		} else {
			conds = append(conds, fmt.Sprintf("%s %s ?", column, sql))
		}

		args = append(args, bound)
	}

	return conds, args
}

// numberArg is a bound SQLite compares as MongoDB does numbers; NaN (SQLite's NULL) is not one.
func numberArg(v any) (any, bool) {
	switch v := v.(type) {
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case float64:
		return v, !math.IsNaN(v)
	}

	return nil, false
}

// sjsonArg encodes an `_id` as the `_id` column holds it.
func sjsonArg(v any) string {
	return string(must.NotFail(sjson.MarshalSingleValue(v)))
}
