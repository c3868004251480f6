// Command gotypes describes, for controllers/deployment/gotypes.json, the Go types that
// kube-controller-manager's pod-template-hash dumps, and computes upstream's hash of pod
// templates for the test fixture. It builds only inside a Kubernetes source tree (it imports
// the tree's own k8s.io/api, apimachinery and kubernetes packages); see README.md.
//
//	gotypes types            # the Python type table module, on stdout
//	gotypes hash <in.jsonl   # per line {"template": {...}, "collisionCount": n|null}:
//	                         # {"hash": ComputeHash, "dump": the spew text} on stdout
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/davecgh/go-spew/spew"
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/controller"
)

type field struct {
	Name   string `json:"name"`
	JSON   string `json:"json"`
	Inline int    `json:"inline"`
	Type   string `json:"type"`
}

type typeInfo struct {
	Kind   string  `json:"kind"`
	Elem   string  `json:"elem,omitempty"`
	Key    string  `json:"key,omitempty"`
	Fields []field `json:"fields,omitempty"`
}

func describe(t reflect.Type, table map[string]typeInfo, pkgs map[string]string) {
	name := t.String()
	if _, seen := table[name]; seen {
		if pkgs[name] != t.PkgPath() {
			panic("two types print as " + name)
		}
		return
	}
	pkgs[name] = t.PkgPath()
	info := typeInfo{Kind: t.Kind().String()}
	table[name] = info
	switch t.Kind() {
	case reflect.Ptr, reflect.Slice, reflect.Array:
		info.Elem = t.Elem().String()
		describe(t.Elem(), table, pkgs)
	case reflect.Map:
		info.Key = t.Key().String()
		info.Elem = t.Elem().String()
		describe(t.Key(), table, pkgs)
		describe(t.Elem(), table, pkgs)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("json"), ",")
			inline := 0
			for _, opt := range tag[1:] {
				if opt == "inline" {
					inline = 1
				}
			}
			jsonName := tag[0]
			if jsonName == "" && inline == 0 && f.IsExported() {
				jsonName = f.Name
			}
			info.Fields = append(info.Fields, field{f.Name, jsonName, inline, f.Type.String()})
			describe(f.Type, table, pkgs)
		}
	}
	table[name] = info
}

func types() {
	table := map[string]typeInfo{}
	describe(reflect.TypeOf(v1.PodTemplateSpec{}), table, map[string]string{})
	names := make([]string, 0, len(table))
	for name := range table {
		names = append(names, name)
	}
	sort.Strings(names)
	// JSON: each name -> [kind, element type, key type, [[Go name, JSON name, inline, type], ...]].
	entries := make([]string, 0, len(names))
	for _, name := range names {
		info := table[name]
		fields := make([]string, 0, len(info.Fields))
		for _, f := range info.Fields {
			fields = append(fields, fmt.Sprintf("[%q, %q, %d, %q]", f.Name, f.JSON, f.Inline, f.Type))
		}
		entries = append(entries, fmt.Sprintf("  %q: [%q, %q, %q, [%s]]", name, info.Kind, info.Elem, info.Key, strings.Join(fields, ", ")))
	}
	fmt.Printf("{\n%s\n}\n", strings.Join(entries, ",\n"))
}

func hash() {
	printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var line struct {
			Template       json.RawMessage `json:"template"`
			CollisionCount *int32          `json:"collisionCount"`
		}
		if err := json.Unmarshal(in.Bytes(), &line); err != nil {
			panic(err)
		}
		var decoded v1.PodTemplateSpec
		if err := json.Unmarshal(line.Template, &decoded); err != nil {
			panic(err)
		}
		// As the template reaches kube-controller-manager: stored by the API server in
		// protobuf, read back by the controller's informer in protobuf, deep-copied.
		for i := 0; i < 2; i++ {
			wire, err := decoded.Marshal()
			if err != nil {
				panic(err)
			}
			decoded = v1.PodTemplateSpec{}
			if err := decoded.Unmarshal(wire); err != nil {
				panic(err)
			}
		}
		template := decoded.DeepCopy()
		dump := printer.Sprintf("%#v", *template)
		if err := out.Encode(map[string]string{
			"hash": controller.ComputeHash(template, line.CollisionCount),
			"dump": dump,
		}); err != nil {
			panic(err)
		}
	}
	if err := in.Err(); err != nil {
		panic(err)
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gotypes types|hash")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "types":
		types()
	case "hash":
		hash()
	default:
		fmt.Fprintln(os.Stderr, "usage: gotypes types|hash")
		os.Exit(2)
	}
}
