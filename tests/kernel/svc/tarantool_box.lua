-- t_svc_tarantool, its second part: tarantool 2.6 (Debian's), JIT on,
-- 4 fibers of box work (replace and get on a memtx space, no WAL), whose
-- tuples the GC finalizes -- also in GC steps a trace exit runs.
-- TT_DIR: a writable directory for box.
box.cfg{ work_dir = os.getenv('TT_DIR'), wal_mode = 'none',
	 memtx_memory = 64 * 1024 * 1024, log_level = 1 }
local fiber = require('fiber')
local s = box.schema.space.create('t', { if_not_exists = true })
s:create_index('pk', { if_not_exists = true })

-- Every other iteration leaves the trace by a side exit that never gets
-- a side trace (hotexit above the 255 a snapshot's count stops at): the
-- exit handler runs GC steps, and they finalize tuples.
jit.opt.start('hotexit=1000')

local function fill(id, n) -- @fill
	local sum = 0
	for i = 1, 200 do
		local t = s:replace({ id * 1000000 + i, n, 'payload' })
		if i % 2 == 0 then
			sum = sum + t[2]
		else
			sum = sum - 1
		end
	end
	return sum
end

local function worker(id) -- @worker
	local n = 0
	while true do
		n = (n + fill(id, n)) % 1000003
		fiber.yield()
	end
end

for i = 1, 4 do
	fiber.create(worker, i)
end
print('ready')
io.stdout:flush()
