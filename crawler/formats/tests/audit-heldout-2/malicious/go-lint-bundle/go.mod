module example.invalid/lintall

go 1.22
