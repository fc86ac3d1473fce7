package jsondecode

// The informers' list decoder (kube's listJSON sends the request): a LIST
// response (up to the whole resource at once when the API server serves it
// from its watch cache, where it ignores the page size: one ~53 MB
// response at 50,000 bench objects) read one item at a time, each parsed
// once with parseJSON and without its managedFields unless
// settings.Kube.KeepManagedFields, into the *unstructured.UnstructuredList
// that the dynamic client builds. client-go's decoder holds the whole body
// and decodes it twice over (the items as raw messages, then everything
// into a map) before the informer strips anything.

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DecodeList reads a JSON list from body, one item at a time, into the
// UnstructuredList that client-go's unstructured.UnstructuredJSONScheme
// would build from the whole body; without the items'
// metadata.managedFields when dropManaged is set. Items without apiVersion
// and kind get the list's (its kind without "List"), as client-go's
// decoder does; a body without a kind is an error, as there. It does not
// close body.
func DecodeList(body io.Reader, dropManaged bool) (*unstructured.UnstructuredList, error) {
	d := listDecoder{streamBuffer: newStreamBuffer(body), strings: newStringCache(), item: pathPlain}
	if dropManaged {
		d.item = pathResource
	}
	list, err := d.list()
	if err != nil {
		return nil, fmt.Errorf("unable to decode list: %w", err)
	}
	if list.GetKind() == "" {
		return nil, errors.New("unable to decode list: Object 'Kind' is missing") // as client-go's decoder
	}
	itemKind, itemVersion := strings.TrimSuffix(list.GetKind(), "List"), list.GetAPIVersion()
	for i := range list.Items {
		if list.Items[i].GetKind() == "" && list.Items[i].GetAPIVersion() == "" {
			list.Items[i].SetKind(itemKind)
			list.Items[i].SetAPIVersion(itemVersion)
		}
	}
	return list, nil
}

// listDecoder reads one list; item is the path its items are parsed at.
type listDecoder struct {
	streamBuffer
	strings *stringCache
	item    parsePath
}

// list reads the list object: its members other than "items" are parsed
// whole, its items one by one.
func (d *listDecoder) list() (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{}} // Items nil without "items", as client-go's
	if _, err := d.take("{"); err != nil {
		return nil, err
	}
	if c, err := d.peek(); err != nil {
		return nil, err
	} else if c == '}' {
		d.r++
		return list, d.end()
	}
	for {
		key, err := d.key()
		if err != nil {
			return nil, err
		}
		if key == "items" {
			err = d.items(list)
		} else {
			err = d.member(list.Object, key)
		}
		if err != nil {
			return nil, err
		}
		if c, err := d.take(",}"); err != nil {
			return nil, err
		} else if c == '}' {
			return list, d.end()
		}
	}
}

// key reads a member's key and the ':' after it.
func (d *listDecoder) key() (string, error) {
	c, err := d.peek()
	if err != nil {
		return "", err
	}
	if c != '"' {
		return "", fmt.Errorf("invalid character %q, want a string for an object key", c)
	}
	raw, err := d.value()
	if err != nil {
		return "", err
	}
	v, err := parseJSONCached(raw, d.strings)
	if err != nil {
		return "", err
	}
	_, err = d.take(":")
	return v.(string), err
}

// member reads a member other than the items into obj.
func (d *listDecoder) member(obj map[string]any, key string) error {
	raw, err := d.value()
	if err != nil {
		return err
	}
	v, err := parseJSONCached(raw, d.strings)
	obj[key] = v
	return err
}

// items reads the list's items (null for none, as client-go reads it).
func (d *listDecoder) items(list *unstructured.UnstructuredList) error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	if c != '[' {
		raw, err := d.value()
		if err != nil {
			return err
		}
		if v, err := parseJSONCached(raw, d.strings); err != nil || v != nil {
			return errors.Join(err, errors.New("items is not a JSON array"))
		}
		list.Items = []unstructured.Unstructured{}
		return nil
	}
	d.r++
	list.Items = []unstructured.Unstructured{} // the last "items" counts, as the last of duplicate keys does
	if c, err := d.peek(); err != nil || c == ']' {
		d.r++
		return err
	}
	for {
		raw, err := d.value()
		if err != nil {
			return err
		}
		v, err := parseJSONAt(raw, d.strings, d.item)
		if err != nil {
			return fmt.Errorf("item %d: %w", len(list.Items), err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("item %d is not a JSON object", len(list.Items))
		}
		list.Items = append(list.Items, unstructured.Unstructured{Object: obj})
		if c, err := d.take(",]"); err != nil || c == ']' {
			return err
		}
	}
}

// end checks that nothing but whitespace follows the list.
func (d *listDecoder) end() error {
	c, err := d.peek()
	switch {
	case err == io.ErrUnexpectedEOF:
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("invalid character %q after the list", c)
}
