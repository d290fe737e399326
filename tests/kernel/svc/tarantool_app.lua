-- t_svc_tarantool's application module: each fiber runs M.worker, which
-- the report names by its module field (tarantool_app.worker: the
-- module's chunk has finished) and whose helpers are named by the
-- definitions in M.worker's own chunk... or their call sites.
local fiber = require('fiber')

local M = {}

local function leaf(n)
	local s = 0
	for i = 1, n do
		s = (s + i * 7) % 1000003
	end
	return s
end

local function mid(n)
	return leaf(n) + 1
end

function M.worker(id)
	local total = 0
	while true do
		total = total + mid(2000 + id)
		fiber.yield()
	end
end

return M
