package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestREADMEListsEverySetting keeps README.md's settings table in step with
// Settings: every variable must be documented with its default.
func TestREADMEListsEverySetting(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	st := reflect.TypeOf(Settings{})
	for i := range st.NumField() {
		f := st.Field(i)
		name := Prefix + "_" + f.Tag.Get("envconfig")
		row := ""
		for _, line := range strings.Split(string(readme), "\n") {
			if strings.HasPrefix(line, "| `"+name+"`") {
				row = line
			}
		}
		if row == "" {
			t.Errorf("README.md settings table lacks %s", name)
			continue
		}
		if def := f.Tag.Get("default"); def != "" && !strings.Contains(row, "`"+def+"`") {
			t.Errorf("README.md row for %s does not show its default %q", name, def)
		}
	}
}
