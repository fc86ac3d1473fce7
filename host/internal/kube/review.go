package kube

import (
	"context"
	"encoding/json"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reviewer is who a bearer token belongs to, as the API server says.
type Reviewer struct {
	User   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// Authenticate asks the API server who token belongs to (a TokenReview).
// ok is false when the server does not accept the token; err is set when
// it could not be asked. The host's metrics endpoint uses it, as
// controller-runtime's secure metrics filter does.
func (c *Client) Authenticate(ctx context.Context, token string) (who Reviewer, ok bool, err error) {
	review := authenticationv1.TokenReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
		Spec:     authenticationv1.TokenReviewSpec{Token: token},
	}
	if err := c.review(ctx, "/apis/authentication.k8s.io/v1/tokenreviews", "tokenreviews", &review); err != nil {
		return Reviewer{}, false, err
	}
	if !review.Status.Authenticated {
		return Reviewer{}, false, nil
	}
	u := review.Status.User
	extra := map[string][]string{}
	for k, v := range u.Extra {
		extra[k] = v
	}
	return Reviewer{User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}, true, nil
}

// Authorize asks the API server whether who may use verb on the
// non-resource path (a SubjectAccessReview); reason is the server's when it
// refuses.
func (c *Client) Authorize(ctx context.Context, who Reviewer, verb, path string) (allowed bool, reason string, err error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range who.Extra {
		extra[k] = v
	}
	review := authorizationv1.SubjectAccessReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"},
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: who.User, UID: who.UID, Groups: who.Groups, Extra: extra,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
		},
	}
	if err := c.review(ctx, "/apis/authorization.k8s.io/v1/subjectaccessreviews", "subjectaccessreviews", &review); err != nil {
		return false, "", err
	}
	return review.Status.Allowed, review.Status.Reason, nil
}

// review creates a review object at path and decodes the answer into it.
func (c *Client) review(ctx context.Context, path, resource string, obj any) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.kube.RequestTimeout)
	defer cancel()
	out, err := c.raw.Post().AbsPath(path).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Raw()
	if err != nil {
		return wrapAPI(reqInfo{verb: "create", resource: resource}, err)
	}
	if err := json.Unmarshal(out, obj); err != nil {
		return fmt.Errorf("kube: decoding the %s answer: %w", resource, err)
	}
	return nil
}
