package kopf

// Filter combinators, Kopf's kopf.all_, kopf.any_, kopf.none_ and
// kopf.not_: they compose callable filters into one, either When
// functions (func(*Context) bool) or callable label, annotation and value
// filters ([ValueFunc], or a plain func(any, *Context) bool). The parts run
// in order and no further than the verdict needs (AllOf stops at the first
// mismatch, AnyOf and NoneOf at the first match), as Python's all() and
// any() do in Kopf's.
//
//	kopf.OnCreate(g, v, p, fn, kopf.When(kopf.AnyOf(isBig, isUrgent)))
//	kopf.OnCreate(g, v, p, fn, kopf.Labels(map[string]any{"app": kopf.Not(kopf.ValueFunc(isLegacy))}))

// Callable is a callable filter that the combinators compose: a When
// function or a value filter.
type Callable interface {
	func(*Context) bool | ValueFunc | func(any, *Context) bool
}

// AllOf matches when every one of fns matches (true for none), Kopf's
// kopf.all_.
func AllOf[F Callable](fns ...F) F { return combine(fns, false, true) }

// AnyOf matches when at least one of fns matches (false for none), Kopf's
// kopf.any_.
func AnyOf[F Callable](fns ...F) F { return combine(fns, true, false) }

// NoneOf matches when none of fns matches (true for none), Kopf's
// kopf.none_.
func NoneOf[F Callable](fns ...F) F { return combine(fns, true, true) }

// Not matches when fn does not, Kopf's kopf.not_.
func Not[F Callable](fn F) F { return NoneOf(fn) }

// combine returns the filter that asks each of fns in turn until one
// answers stopAt, and then says !all; when none does, it says all.
func combine[F Callable](fns []F, stopAt, all bool) F {
	parts := make([]ValueFunc, len(fns))
	for i, fn := range fns {
		parts[i] = asValueFunc(fn)
	}
	verdict := func(v any, c *Context) bool {
		for _, part := range parts {
			if part(v, c) == stopAt {
				return !all
			}
		}
		return all
	}
	var out any
	switch any(*new(F)).(type) {
	case func(*Context) bool:
		out = func(c *Context) bool { return verdict(nil, c) }
	case ValueFunc:
		out = ValueFunc(verdict)
	default:
		out = verdict
	}
	return out.(F)
}

// asValueFunc gives every callable filter the signature of a ValueFunc (a
// When function ignores the value).
func asValueFunc[F Callable](fn F) ValueFunc {
	switch f := any(fn).(type) {
	case func(*Context) bool:
		return func(_ any, c *Context) bool { return f(c) }
	case ValueFunc:
		return f
	case func(any, *Context) bool:
		return f
	}
	return nil
}
