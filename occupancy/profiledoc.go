package occupancy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gpuplan/gpuplan/internal/strictjson"
)

// ProfileSchema names the version of the device profile document that
// gpuplan writes (`gpuplan devices --device NAME --json`) and reads
// (--device-file, a workload's device_file). A change that an older reader
// would misread gets a new version.
const ProfileSchema = "gpuplan.device-profile/v1"

// profileSchemaPrefix is the part of ProfileSchema before its version.
const profileSchemaPrefix = "gpuplan.device-profile/"

// ProfileDocument is a device profile as gpuplan writes and reads it: the
// schema version, the device and, for people reading the file, where it
// came from and what follows from it. On reading, Device is what counts;
// Source, Closest and DiffFromClosest are informational and not checked,
// and BandwidthBytesPerSec, when present, must equal the bandwidth the
// device's memory clock and bus width give (it is derived, not an input).
type ProfileDocument struct {
	Schema string `json:"schema"`
	// Source names where the profile came from: a built-in profile's short
	// name, a file, or "<stdin>".
	Source               string      `json:"source,omitempty"`
	Device               Device      `json:"device"`
	BandwidthBytesPerSec int64       `json:"bandwidth_bytes_per_sec,omitempty"`
	Closest              string      `json:"closest,omitempty"`
	DiffFromClosest      []FieldDiff `json:"diff_from_closest,omitempty"`
}

// NewProfileDocument returns the document for d read from source, with
// its derived bandwidth. With compare set it also names the closest
// built-in profile and the fields that differ from it (an empty list when
// none do).
func NewProfileDocument(source string, d Device, compare bool) ProfileDocument {
	doc := ProfileDocument{Schema: ProfileSchema, Source: source, Device: d, BandwidthBytesPerSec: d.BandwidthBytesPerSec()}
	if compare {
		c := Closest(d)
		doc.Closest = c.Short
		doc.DiffFromClosest = Diff(c.Device, d)
		if doc.DiffFromClosest == nil {
			doc.DiffFromClosest = []FieldDiff{}
		}
	}
	return doc
}

// profileWire is ProfileDocument as decoded: the device stays raw so that
// it gets LoadDeviceJSON's required fields, defaults and checks.
type profileWire struct {
	Schema               string          `json:"schema"`
	Source               string          `json:"source,omitempty"`
	Device               json.RawMessage `json:"device"`
	BandwidthBytesPerSec *int64          `json:"bandwidth_bytes_per_sec,omitempty"`
	Closest              string          `json:"closest,omitempty"`
	DiffFromClosest      []FieldDiff     `json:"diff_from_closest,omitempty"`
}

// isProfileDocument reports whether data starts with a JSON object with a
// "schema" member (a ProfileDocument rather than a bare device object);
// what follows it is left to the strict decoder to refuse.
func isProfileDocument(data []byte) bool {
	var probe map[string]json.RawMessage
	if json.NewDecoder(bytes.NewReader(data)).Decode(&probe) != nil {
		return false
	}
	_, ok := probe["schema"]
	return ok
}

// loadProfileDocument decodes a ProfileDocument strictly and returns its
// device and the device fields that got defaults; errors inside the device
// name their field as device.<field>.
func loadProfileDocument(source string, data []byte) (Device, []DefaultedField, error) {
	var w profileWire
	if err := strictjson.Decode(source, data, &w); err != nil {
		return Device{}, nil, err
	}
	if err := checkSchema(source, w.Schema); err != nil {
		return Device{}, nil, err
	}
	if len(w.Device) == 0 || bytes.Equal(bytes.TrimSpace(w.Device), []byte("null")) {
		return Device{}, nil, strictjson.Required(source, "device", `add "device": {...} (gpuplan devices --device h100-sxm --json writes a complete profile)`)
	}
	d, defaulted, err := loadDeviceObject(source, w.Device)
	if err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) {
			se.Field = joinField("device", se.Field)
		}
		return Device{}, nil, err
	}
	if w.BandwidthBytesPerSec != nil && *w.BandwidthBytesPerSec != d.BandwidthBytesPerSec() {
		return Device{}, nil, &strictjson.Error{Source: source, Field: "bandwidth_bytes_per_sec",
			Msg: fmt.Sprintf("is %d, but the device's memory clock and bus width give %d", *w.BandwidthBytesPerSec, d.BandwidthBytesPerSec()),
			Fix: "remove bandwidth_bytes_per_sec (it is derived), or change device.memory_clock_khz and device.memory_bus_bits"}
	}
	return d, defaulted, nil
}

func checkSchema(source, schema string) error {
	switch {
	case schema == ProfileSchema:
		return nil
	case strings.HasPrefix(schema, profileSchemaPrefix):
		return &strictjson.Error{Source: source, Field: "schema", Msg: fmt.Sprintf("version %q is not one this build reads", schema),
			Fix: fmt.Sprintf("write the profile with this gpuplan build (gpuplan devices --json), or use a build that reads %s", schema)}
	}
	return &strictjson.Error{Source: source, Field: "schema", Msg: fmt.Sprintf("%q is not a gpuplan device profile schema", schema),
		Fix: fmt.Sprintf("set \"schema\": %q", ProfileSchema)}
}

// joinField prefixes a JSON field path: device + sm_count is device.sm_count;
// a whole-document field such as "(top level)" becomes the prefix alone.
func joinField(prefix, field string) string {
	if field == "" || strings.HasPrefix(field, "(") {
		return prefix
	}
	return prefix + "." + field
}
