// Package apitesting helps tests of API types: Filler sets every field of an
// object by reflection, so that round-trip tests cover each modelled field
// without listing them by hand (and notice fields added later), and
// AssertSameJSON compares such an object with KubeVirt's type of the same kind.
package apitesting

import (
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// FillModes are the two ways round-trip tests fill an object: every scalar set, and every
// scalar zero in allocated structs (see Filler).
var FillModes = []struct {
	Name       string
	ZeroLeaves bool
}{
	{"non-zero values", false},
	{"zero values in allocated structs", true},
}

// Filler sets every field of a value by reflection.
//
// With ZeroLeaves false every scalar gets a distinct non-zero value; with
// ZeroLeaves true scalars stay zero while every pointer, slice and map is
// still allocated, which exposes differences in omitempty handling. Slices
// and maps get one element. Unsigned integers make Fill panic: API types
// must not use them. Fill is meant for tests and panics on types it cannot
// fill.
type Filler struct {
	ZeroLeaves bool
	counter    int
}

var (
	quantityType    = reflect.TypeOf(resource.Quantity{})
	timeType        = reflect.TypeOf(metav1.Time{})
	intOrStringType = reflect.TypeOf(intstr.IntOrString{})
	objectMetaType  = reflect.TypeOf(metav1.ObjectMeta{})
	typeMetaType    = reflect.TypeOf(metav1.TypeMeta{})
	listMetaType    = reflect.TypeOf(metav1.ListMeta{})
)

// Fill sets every field reachable from ptr, which must be a non-nil pointer.
func (f *Filler) Fill(ptr any) {
	f.value(reflect.ValueOf(ptr).Elem(), 0)
}

func (f *Filler) next() int {
	f.counter++
	return f.counter
}

func (f *Filler) value(v reflect.Value, depth int) {
	if depth > 40 {
		panic(fmt.Sprintf("filler: type nesting too deep at %s", v.Type()))
	}
	switch v.Type() {
	case quantityType:
		if f.ZeroLeaves {
			v.Set(reflect.ValueOf(resource.MustParse("0")))
		} else {
			v.Set(reflect.ValueOf(resource.MustParse(fmt.Sprintf("%dMi", f.next()))))
		}
		return
	case timeType:
		if !f.ZeroLeaves {
			t := time.Date(2024, 1, 2, 3, 4, f.next()%60, 0, time.UTC)
			v.Set(reflect.ValueOf(metav1.NewTime(t)))
		}
		return
	case intOrStringType:
		if f.ZeroLeaves {
			v.Set(reflect.ValueOf(intstr.FromInt32(0)))
		} else {
			v.Set(reflect.ValueOf(intstr.FromString(fmt.Sprintf("port-%d", f.next()))))
		}
		return
	case objectMetaType:
		v.Set(reflect.ValueOf(f.objectMeta()))
		return
	case typeMetaType, listMetaType:
		return // set by the caller where it matters
	}

	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				f.value(v.Field(i), depth+1)
			}
		}
	case reflect.Pointer:
		if f.ZeroLeaves && v.Type().Elem() == timeType {
			return // a zero time marshals as null, which decodes back to nil
		}
		elem := reflect.New(v.Type().Elem())
		f.value(elem.Elem(), depth+1)
		v.Set(elem)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // []byte
			if !f.ZeroLeaves {
				v.SetBytes([]byte(fmt.Sprintf("bytes-%d", f.next())))
			} else {
				v.SetBytes([]byte{})
			}
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		f.value(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		key := reflect.New(v.Type().Key()).Elem()
		f.mapKey(key)
		val := reflect.New(v.Type().Elem()).Elem()
		f.value(val, depth+1)
		m.SetMapIndex(key, val)
		v.Set(m)
	case reflect.String:
		if !f.ZeroLeaves {
			v.SetString(fmt.Sprintf("s%d", f.next()))
		}
	case reflect.Bool:
		v.SetBool(!f.ZeroLeaves)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !f.ZeroLeaves {
			v.SetInt(int64(f.next()))
		}
	case reflect.Float32, reflect.Float64:
		if !f.ZeroLeaves {
			v.SetFloat(float64(f.next()) + 0.5)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		panic(fmt.Sprintf("filler: unsigned integer %s in an API type", v.Type()))
	case reflect.Interface:
		// no interface-typed fields are expected; leave nil
	default:
		panic(fmt.Sprintf("filler: unhandled kind %s (%s)", v.Kind(), v.Type()))
	}
}

// mapKey gives a map key a value that is never empty, since an empty key
// would be dropped or merged by some decoders.
func (f *Filler) mapKey(key reflect.Value) {
	switch key.Kind() {
	case reflect.String:
		key.SetString(fmt.Sprintf("key%d", f.next()))
	default:
		panic(fmt.Sprintf("filler: unhandled map key kind %s", key.Kind()))
	}
}

func (f *Filler) objectMeta() metav1.ObjectMeta {
	if f.ZeroLeaves {
		return metav1.ObjectMeta{Labels: map[string]string{}, Annotations: map[string]string{}}
	}
	created := metav1.NewTime(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))
	return metav1.ObjectMeta{
		Name:              fmt.Sprintf("name-%d", f.next()),
		Namespace:         "ns",
		UID:               "0b3a5c4e-7d0f-4f59-9a53-4d1b5e3c2a10",
		ResourceVersion:   "42",
		Generation:        3,
		CreationTimestamp: created,
		Labels:            map[string]string{"app": "demo"},
		Annotations:       map[string]string{"note": "x"},
		Finalizers:        []string{"kubevirt.io/test"},
	}
}
