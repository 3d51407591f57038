// Command codestats prints the figures the house style watches in Go source:
// the types with the most methods, the interfaces with the most methods and
// the longest functions. It reads source only (go/parser), so it needs no
// build and counts generated and test files only when asked.
//
// Usage:
//
//	go run ./hack/tools/codestats [-n 5] [-tests] dir...
//
// Each dir is walked recursively; vendor, testdata and hidden directories
// are skipped.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// figure is one named count, e.g. a type and its number of methods.
type figure struct {
	name  string
	count int
}

// stats gathers the figures of every file parsed.
type stats struct {
	fset       *token.FileSet
	methods    map[string]int                // "dir.Type" → methods declared on it
	interfaces map[string]*ast.InterfaceType // "dir.Name" → declaration
	funcs      []figure
}

func main() {
	top := flag.Int("n", 5, "how many of each figure to print")
	tests := flag.Bool("tests", false, "include _test.go files")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: codestats [-n N] [-tests] dir...")
		os.Exit(2)
	}
	s := &stats{fset: token.NewFileSet(), methods: map[string]int{}, interfaces: map[string]*ast.InterfaceType{}}
	for _, root := range flag.Args() {
		if err := s.walk(root, *tests); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	var types []figure
	for name, n := range s.methods {
		types = append(types, figure{name, n})
	}
	print("methods per type", types, *top)
	var ifaces []figure
	for name, it := range s.interfaces {
		ifaces = append(ifaces, figure{name, s.interfaceMethods(dirOf(name), it, 0)})
	}
	print("methods per interface", ifaces, *top)
	print("lines per function", s.funcs, *top)
}

// walk parses every Go file under root.
func (s *stats) walk(root string, tests bool) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || (!tests && strings.HasSuffix(path, "_test.go")) {
			return nil
		}
		f, err := parser.ParseFile(s.fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		s.file(filepath.Dir(path), f)
		return nil
	})
}

// file records the methods, interfaces and function lengths of one file.
func (s *stats) file(dir string, f *ast.File) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			name := dir + "." + d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				recv := receiverName(d.Recv.List[0].Type)
				s.methods[dir+"."+recv]++
				name = dir + "." + recv + "." + d.Name.Name
			}
			lines := s.fset.Position(d.End()).Line - s.fset.Position(d.Pos()).Line + 1
			s.funcs = append(s.funcs, figure{name, lines})
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					s.interfaces[dir+"."+ts.Name.Name] = it
				}
			}
		}
	}
}

// receiverName returns the type name of a method receiver, without pointer
// or type parameters.
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

// interfaceMethods counts the methods in an interface's method set.
// Interfaces embedded from the same package are expanded; one from another
// package (or not found) counts as one.
func (s *stats) interfaceMethods(dir string, it *ast.InterfaceType, depth int) int {
	n := 0
	for _, m := range it.Methods.List {
		if len(m.Names) > 0 {
			n += len(m.Names)
			continue
		}
		id, ok := m.Type.(*ast.Ident)
		if emb := s.interfaces[dir+"."+nameOf(id, ok)]; emb != nil && depth < 10 {
			n += s.interfaceMethods(dir, emb, depth+1)
			continue
		}
		n++
	}
	return n
}

// nameOf returns an identifier's name, or "" when there is none.
func nameOf(id *ast.Ident, ok bool) string {
	if !ok {
		return ""
	}
	return id.Name
}

// dirOf returns the directory part of a "dir.Name" key.
func dirOf(key string) string {
	return key[:strings.LastIndex(key, ".")]
}

// print writes the top n figures, largest first.
func print(title string, figs []figure, n int) {
	sort.Slice(figs, func(i, j int) bool {
		if figs[i].count != figs[j].count {
			return figs[i].count > figs[j].count
		}
		return figs[i].name < figs[j].name
	})
	fmt.Printf("%s:\n", title)
	for i := 0; i < len(figs) && i < n; i++ {
		fmt.Printf("  %4d  %s\n", figs[i].count, figs[i].name)
	}
}
