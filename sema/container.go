package sema

import "gtrace/lang/ast"

// containerPidVar is kubectl-trace's variable for the host pid of the
// first process of the container traced.
const containerPidVar = "$container_pid"

// containerPid checks a read of $container_pid, not assigned in the
// script: it stands for the pid of the container that the command line
// names, found once.
func (c *checker) containerPid(v *ast.Var) *Type {
	if c.opts.ContainerPid == nil {
		c.errorf(v, "Undefined or undeclared variable: %s (it is the first process of the container that --cgroup, --pod or --pidns names)", v.Name)
		return nil
	}
	if !c.containerPidFound {
		c.containerPidFound = true
		c.containerPidValue, c.containerPidErr = c.opts.ContainerPid()
	}
	if c.containerPidErr != nil {
		c.errorf(v, "%s: %v", v.Name, c.containerPidErr)
		return nil
	}
	lit := &ast.IntLit{At: v.At, Value: uint64(c.containerPidValue)}
	c.prog.Stands[v] = lit
	return c.expr(lit)
}
