-- t_svc_tarantool: tarantool 2.6 (Debian's) running 4 fibers of Lua work
-- (tarantool_app.worker); JIT off unless SVC_JIT=on.
if os.getenv('SVC_JIT') ~= 'on' then
	jit.off()
end
local fiber = require('fiber')
package.path = 'tests/kernel/svc/?.lua;' .. package.path
local app = require('tarantool_app')
for i = 1, 4 do
	fiber.create(app.worker, i)
end
print('ready')
io.stdout:flush()
