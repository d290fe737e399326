-- t_svc_kresd's module (loaded by modules.load('kresd_work') from
-- svc/kresd.conf): its layer's begin, kresd_work.query, runs for every
-- query kresd receives, called from C through kresd's layer trampoline.
local kresd_work = {}

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

function kresd_work.query(state, req)
	kresd_work.total = mid(100000)
	return state
end

kresd_work.layer = { begin = kresd_work.query }

return kresd_work
