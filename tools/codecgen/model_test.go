package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
)

func modelErr(t reflect.Type, withJSON bool) error {
	_, err := newModel().add(t, withJSON)
	return err
}

func TestModel_RefusesAFieldWithoutAWireTag(t *testing.T) {
	type rec struct {
		A string `json:"a" wire:"1"`
		B string `json:"b"`
	}
	require.ErrorContains(t, modelErr(reflect.TypeFor[rec](), false), "rec.B: no wire tag")
}

func TestModel_RefusesANumberUsedTwiceCompactFormsIncluded(t *testing.T) {
	type rec struct {
		A string `json:"a" wire:"1,uuid=3"`
		B string `json:"b" wire:"3"`
	}
	require.ErrorContains(t, modelErr(reflect.TypeFor[rec](), false), "rec.B: wire field 3 is A's already")
	type rec2 struct {
		A string `json:"a" wire:"2"`
		B int    `json:"b" wire:"2"`
	}
	require.ErrorContains(t, modelErr(reflect.TypeFor[rec2](), false), "wire field 2")
}

func TestModel_RefusesWhatTheCodecCannotStore(t *testing.T) {
	for name, c := range map[string]struct {
		t    reflect.Type
		want string
	}{
		"a number that is not one": {reflect.TypeFor[struct {
			A string `wire:"x"`
		}](), "field number"},
		"a map": {reflect.TypeFor[struct {
			A map[string]string `wire:"1"`
		}](), "no stored form"},
		"a compact form of an integer": {reflect.TypeFor[struct {
			A int `wire:"1,uuid=2"`
		}](), "compact form"},
		"an unknown option": {reflect.TypeFor[struct {
			A int `wire:"1,packed"`
		}](), "unknown option"},
		"an offset from a string": {reflect.TypeFor[struct {
			A string `wire:"1"`
			B int    `wire:"2,offset=A"`
		}](), "offset=A"},
	} {
		require.ErrorContains(t, modelErr(c.t, false), c.want, name)
	}
}

func TestModel_RefusesJSONTheEventWriterCannotWrite(t *testing.T) {
	type withNull struct {
		A *runstate.StepError `json:"a" wire:"1"`
	}
	require.ErrorContains(t, modelErr(reflect.TypeFor[withNull](), true), "omitempty")
	require.NoError(t, modelErr(reflect.TypeFor[withNull](), false), "a record with no JSON table")
	type named struct {
		A string `json:"Has-Dash" wire:"1"`
	}
	require.ErrorContains(t, modelErr(reflect.TypeFor[named](), true), "JSON name")
	type token struct {
		A string `json:"a" wire:"1,token=2"`
	}
	require.ErrorContains(t, modelErr(reflect.TypeFor[token](), true), "token= has no JSON form")
	require.NoError(t, modelErr(reflect.TypeFor[token](), false), "a checkpoint field may have it")
	type tokens struct {
		A []string `wire:"1,token=2"`
	}
	require.NoError(t, modelErr(reflect.TypeFor[tokens](), false), "a []string may have token=")
	type uuids struct {
		A []string `wire:"1,uuid=2"`
	}
	require.ErrorContains(t, modelErr(reflect.TypeFor[uuids](), false), "compact form is of a string field")
}

func TestModel_ReadsJSONAsEncodingJSONWritesIt(t *testing.T) {
	type rec struct {
		S  string          `json:"s,omitempty" wire:"1"`
		T  time.Time       `json:"t,omitempty" wire:"2"` // omitempty never leaves a struct out
		TZ time.Time       `json:"tz,omitzero" wire:"3"`
		R  json.RawMessage `json:"r,omitempty" wire:"4"`
		N  int             `json:"n" wire:"5"`
		X  int             `json:"-" wire:"6"`
	}
	msg, err := newModel().add(reflect.TypeFor[rec](), true)
	require.NoError(t, err)
	var got []string
	for _, f := range msg.fields {
		got = append(got, f.jsonKey+map[bool]string{true: ",omit"}[f.jsonOmit]+map[bool]string{true: ",skip"}[f.jsonSkip])
	}
	require.Equal(t, []string{"s,omit", "t", "tz,omit", "r,omit", "n", ",skip"}, got)
}

func TestSource_IsGoThatNamesEveryStoredMessage(t *testing.T) {
	m := newModel()
	_, err := m.add(reflect.TypeFor[runstate.Event](), true)
	require.NoError(t, err)
	_, err = m.add(reflect.TypeFor[runstate.State](), false)
	require.NoError(t, err)
	src := string(source(m, "test"))
	for _, name := range []string{"Event", "EventData", "State", "StepState", "KeySpan", "ManualResult"} {
		require.True(t, strings.Contains(src, "func append"+name+"(") && strings.Contains(src, "func decode"+name+"("), name)
	}
	require.Contains(t, src, "var eventJSON = ")
	require.NotContains(t, src, "var stateJSON", "a checkpoint has no JSON writer")
}
