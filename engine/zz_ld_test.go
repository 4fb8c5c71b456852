package engine
import ("os";"testing";"fmt")
func TestLoadExample(t *testing.T){ b,_:=os.ReadFile("../examples/workflow.yaml"); d,err:=LoadDefinitionYAML(b); if err!=nil{t.Fatal(err)}; d=d.WithDefaults(); if err:=d.Validate(); err!=nil {t.Fatal(err)}; fmt.Printf("%+v\n", d.Actions[2]) }
