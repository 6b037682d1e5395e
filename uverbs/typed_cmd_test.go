package uverbs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteCmdsTyped keeps every write() command going through its typed
// value in internal/abi (abi.CmdCreateCq.Build, ...): a WriteCmd literal
// built by hand pairs a command with structs by convention only.
func TestWriteCmdsTyped(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if sel, ok := lit.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "WriteCmd" {
				t.Errorf("%v: abi.WriteCmd built by hand; use the command's abi.Cmd* value", fset.Position(lit.Pos()))
			}
			return true
		})
	}
}
