package sema

import (
	"errors"
	"strconv"
	"strings"

	"gtrace/lang/ast"
)

// containerPidVar is kubectl-trace's variable for the host pid of the
// first process of the container traced.
const containerPidVar = "$container_pid"

// errNoContainer is why $container_pid has no value.
var errNoContainer = errors.New("no container is named: it is the first process of the one --cgroup, --pod or --pidns names")

// containerPid checks a read of $container_pid, not assigned in the
// script: it stands for the pid of the container that the command line
// names.
func (c *checker) containerPid(v *ast.Var) *Type {
	pid, err := c.findContainerPid()
	switch {
	case errors.Is(err, errNoContainer):
		c.errorf(v, "Undefined or undeclared variable: %s (%v)", v.Name, err)
		return nil
	case err != nil:
		c.errorf(v, "%s: %v", v.Name, err)
		return nil
	}
	lit := &ast.IntLit{At: v.At, Value: uint64(pid)}
	c.prog.Stands[v] = lit
	return c.expr(lit)
}

// findContainerPid finds $container_pid's value once.
func (c *checker) findContainerPid() (int, error) {
	if c.opts.ContainerPid == nil {
		return 0, errNoContainer
	}
	if !c.containerPidFound {
		c.containerPidFound = true
		c.containerPidValue, c.containerPidErr = c.opts.ContainerPid()
	}
	return c.containerPidValue, c.containerPidErr
}

// attachContainerPid writes $container_pid's value for the text of an
// attach point that starts with it after the $, as in
// `uprobe:/proc/$container_pid/root/usr/bin/app:main`, and says how
// many bytes of rest it took; 0 when rest does not start with it.
func (c *checker) attachContainerPid(b *strings.Builder, rest string) (int, error) {
	name := strings.TrimPrefix(containerPidVar, "$")
	if !strings.HasPrefix(rest, name) {
		return 0, nil
	}
	pid, err := c.findContainerPid()
	if err != nil {
		return 0, errors.New(containerPidVar + ": " + err.Error())
	}
	b.WriteString(strconv.Itoa(pid))
	return len(name), nil
}
