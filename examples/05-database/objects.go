package main

import (
	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

// engines maps an engine to its image and port.
var engines = map[string]struct {
	image string
	port  int
}{
	"postgresql": {"postgres", 5432},
	"mysql":      {"mysql", 3306},
	"mariadb":    {"mariadb", 3306},
}

func selector(name string) map[string]any {
	return map[string]any{"app.kubernetes.io/instance": name, "app.kubernetes.io/name": "database"}
}

func statefulSet(name string, spec kopf.Object) kopf.Object {
	e := engines[spec.String("engine")]
	replicas, ok := spec.Get("replicas")
	if !ok {
		replicas = 1
	}
	return kopf.Object{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": name + "-db"},
		"spec": map[string]any{
			"replicas": replicas, "serviceName": name,
			"selector": map[string]any{"matchLabels": selector(name)},
			"template": map[string]any{
				"metadata": map[string]any{"labels": selector(name)},
				"spec": map[string]any{
					"containers": []any{map[string]any{
						"name": "db", "image": e.image + ":" + spec.String("version"),
						"ports":        []any{map[string]any{"containerPort": e.port}},
						"volumeMounts": []any{map[string]any{"name": "data", "mountPath": "/var/lib/data"}},
					}},
					"volumes": []any{map[string]any{"name": "data",
						"persistentVolumeClaim": map[string]any{"claimName": name + "-data"}}},
				},
			},
		},
	}
}

func service(name, engine string) kopf.Object {
	return kopf.Object{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"clusterIP": "None", "selector": selector(name),
			"ports": []any{map[string]any{"name": "db", "port": engines[engine].port}},
		},
	}
}

func claim(name, storage string) kopf.Object {
	return kopf.Object{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": name + "-data"},
		"spec": map[string]any{
			"accessModes": []any{"ReadWriteOnce"},
			"resources":   map[string]any{"requests": map[string]any{"storage": storage}},
		},
	}
}

func cronJob(name string) kopf.Object {
	return kopf.Object{
		"apiVersion": "batch/v1", "kind": "CronJob",
		"metadata": map[string]any{"name": name + "-backup"},
		"spec": map[string]any{
			"schedule": "0 2 * * *",
			"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "OnFailure",
				"containers": []any{map[string]any{"name": "backup", "image": "busybox",
					"command": []any{"sh", "-c", "echo backing up " + name}}},
			}}}},
		},
	}
}
