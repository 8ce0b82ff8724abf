import time, torch
for dt in (torch.float16, torch.bfloat16):
    a = torch.randn(8192, 8192, device="cuda", dtype=dt)
    b = torch.randn(8192, 8192, device="cuda", dtype=dt)
    torch.cuda.synchronize(); t = time.time()
    for _ in range(20):
        a @ b
    torch.cuda.synchronize()
    print(dt, f"{20 * 2 * 8192**3 / (time.time() - t) / 1e12:.1f} TFLOPS")
