// Command 05-database is an example operator for a Database resource
// (demo.kopf.dev/v1, crd.yaml), adapted from a Kopf tutorial's operator:
//
//   - create: a StatefulSet <name>-db, a headless Service <name> and a
//     PersistentVolumeClaim <name>-data, all adopted by the Database;
//   - update: scales the StatefulSet when spec.replicas changes;
//   - field spec.backupEnabled: creates or deletes the CronJob <name>-backup
//     (also on creation, from absent to the first value);
//   - timer: recreates the Service if it was deleted (drift) and writes
//     status.conditions.
package main

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

var databases = kopf.Resource{Group: "demo.kopf.dev", Version: "v1", Plural: "databases"}

func init() {
	kopf.Module("database", "0.1.0")
	databases.OnCreate(create, kopf.ID("create"))
	databases.OnUpdate(scale, kopf.ID("scale"))
	databases.OnField(backup, kopf.ID("backup"), kopf.Field("spec.backupEnabled"))
	databases.Timer(reconcile, kopf.ID("reconcile"), kopf.Interval(2*time.Second))
	kopf.Permit("apps", "statefulsets", "get", "create", "patch")
	kopf.Permit("", "services", "get", "create")
	kopf.Permit("", "persistentvolumeclaims", "create")
	kopf.Permit("batch", "cronjobs", "create", "delete")
}

func create(ctx *kopf.Context) (any, error) {
	spec := ctx.Spec()
	for _, c := range []struct {
		version, resource string
		obj               kopf.Object
	}{
		{"apps/v1", "statefulsets", statefulSet(ctx.Name(), spec)},
		{"v1", "services", service(ctx.Name(), spec.String("engine"))},
		{"v1", "persistentvolumeclaims", claim(ctx.Name(), spec.String("storage"))},
	} {
		if err := createAdopted(ctx, c.version, c.resource, c.obj); err != nil {
			return nil, err
		}
	}
	ctx.Patch().Set("status.state", "Provisioning")
	ctx.Patch().Set("status.engine", spec.String("engine"))
	ctx.Patch().Set("status.version", spec.String("version"))
	ctx.Logger().Info("database provisioning started", "engine", spec.String("engine"))
	return nil, nil
}

// scale follows spec.replicas onto the StatefulSet.
func scale(ctx *kopf.Context) (any, error) {
	for _, d := range ctx.Diff() {
		if len(d.Field) != 2 || d.Field[0] != "spec" || d.Field[1] != "replicas" {
			continue
		}
		patch := map[string]any{"spec": map[string]any{"replicas": d.New}}
		if _, err := ctx.Client("apps", "v1", "statefulsets").Namespace(ctx.Namespace()).
			Patch(ctx.Name()+"-db", kopf.MergePatch, patch); err != nil {
			return nil, err
		}
		ctx.Logger().Info("scaled", "from", d.Old, "to", d.New)
		ctx.Patch().Set("status.replicas", d.New)
	}
	return nil, nil
}

// backup creates or deletes the backup CronJob.
func backup(ctx *kopf.Context) (any, error) {
	cronjobs := ctx.Client("batch", "v1", "cronjobs").Namespace(ctx.Namespace())
	if on, _ := ctx.New().(bool); on {
		if err := createAdopted(ctx, "batch/v1", "cronjobs", cronJob(ctx.Name())); err != nil {
			return nil, err
		}
		ctx.Logger().Info("backups enabled")
		return map[string]any{"message": "enabled"}, nil
	}
	if err := cronjobs.Delete(ctx.Name() + "-backup"); err != nil && !errors.Is(err, kopf.ErrNotFound) {
		return nil, err
	}
	ctx.Logger().Info("backups disabled")
	return map[string]any{"message": "disabled"}, nil
}

// reconcile repairs drift and reports it in status.conditions.
func reconcile(ctx *kopf.Context) (any, error) {
	svcReason := "Present"
	_, err := ctx.Client("", "v1", "services").Namespace(ctx.Namespace()).Get(ctx.Name())
	switch {
	case errors.Is(err, kopf.ErrNotFound):
		if err := createAdopted(ctx, "v1", "services", service(ctx.Name(), ctx.Spec().String("engine"))); err != nil {
			return nil, err
		}
		svcReason = "Recreated"
		ctx.Logger().Warn("service was missing: recreated", "service", ctx.Name())
	case err != nil:
		return nil, err
	}
	var sts struct {
		Spec struct {
			Replicas int64 `json:"replicas"`
		} `json:"spec"`
	}
	if err := ctx.Client("apps", "v1", "statefulsets").Namespace(ctx.Namespace()).GetInto(ctx.Name()+"-db", &sts); err != nil {
		return nil, fmt.Errorf("reading the statefulset: %w", err)
	}
	got, want := sts.Spec.Replicas, ctx.Spec().Int("replicas")
	scaled := condition("Scaled", got == want, "Replicas", fmt.Sprintf("statefulset has %d replicas, spec asks %d", got, want))
	conditions := []any{condition("ServiceReady", true, svcReason, "service "+ctx.Name()), scaled}
	if old, _ := ctx.Status().Get("conditions"); !reflect.DeepEqual(old, conditions) {
		ctx.Patch().Set("status.conditions", conditions)
	}
	return nil, nil
}

func condition(typ string, ok bool, reason, message string) any {
	status := "False"
	if ok {
		status = "True"
	}
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message}
}

// createAdopted adopts obj and creates it; one that exists already (a
// retried handler) is fine.
func createAdopted(ctx *kopf.Context, apiVersion, resource string, obj kopf.Object) error {
	group, version := "", apiVersion
	if i := len(apiVersion) - len("/v1"); i > 0 && apiVersion[i:] == "/v1" {
		group, version = apiVersion[:i], "v1"
	}
	ctx.Adopt(obj)
	_, err := ctx.Client(group, version, resource).Namespace(ctx.Namespace()).Create(obj)
	if err != nil && !errors.Is(err, kopf.ErrAlreadyExists) {
		return err
	}
	return nil
}

// main never runs: the host initialises the module through _initialize.
func main() {}
