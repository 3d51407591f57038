package subresource

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type opts struct {
	GracePeriod *int64   `json:"gracePeriod,omitempty"`
	DryRun      []string `json:"dryRun,omitempty"`
}

func TestDecodeBody(t *testing.T) {
	five := int64(5)
	cases := []struct {
		body     string
		want     opts
		wantCode int32
	}{
		{body: "", want: opts{}},
		{body: "  \n", want: opts{}},
		{body: "{}", want: opts{}},
		{body: `{"gracePeriod":5,"unknown":true}`, want: opts{GracePeriod: &five}},
		{body: `{"gracePeriod":"5"}`, wantCode: 400},
		{body: `[]`, wantCode: 400},
		{body: `{`, wantCode: 400},
		{body: `{"dryRun":"All"}`, wantCode: 400},
		{body: `{"x":"` + strings.Repeat("a", maxBodyBytes) + `"}`, wantCode: 413},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(http.MethodPut, "/x", strings.NewReader(tc.body))
		var got opts
		err := DecodeBody(r, &got)
		var code int32
		if err != nil {
			code = err.(apierrors.APIStatus).Status().Code
		}
		if code != tc.wantCode {
			t.Errorf("%.40q: code %d (%v), want %d", tc.body, code, err, tc.wantCode)
		}
		if tc.wantCode == 0 && !cmp.Equal(tc.want, got) {
			t.Errorf("%.40q: decoded %+v, want %+v", tc.body, got, tc.want)
		}
	}
}

func TestDryRun(t *testing.T) {
	cases := []struct {
		query   string
		body    []string
		want    bool
		wantErr bool
	}{
		{query: "", want: false},
		{query: "?dryRun=All", want: true},
		{body: []string{"All"}, want: true},
		{query: "?dryRun=All&dryRun=All", body: []string{"All"}, want: true},
		{query: "?dryRun=all", wantErr: true},
		{body: []string{""}, wantErr: true},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(http.MethodPut, "/x"+tc.query, nil)
		got, err := DryRun(r, tc.body)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%q %v: %v, %v; want %v (error %v)", tc.query, tc.body, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestWriteError(t *testing.T) {
	cases := []struct {
		err      error
		wantCode int
	}{
		{apierrors.NewConflict(metav1.SchemeGroupVersion.WithResource("x").GroupResource(), "n", errors.New("VM is not running")), 409},
		{apierrors.NewBadRequest("bad"), 400},
		{errors.New("plain"), 500},
	}
	for _, tc := range cases {
		w := httptest.NewRecorder()
		WriteError(w, tc.err)
		var st metav1.Status
		if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
			t.Fatalf("%v: body %q: %v", tc.err, w.Body.String(), err)
		}
		if w.Code != tc.wantCode || int(st.Code) != tc.wantCode || st.Kind != "Status" || !strings.Contains(st.Message, "") {
			t.Errorf("%v: code %d, status %+v; want %d", tc.err, w.Code, st, tc.wantCode)
		}
	}
}
