# point mass first, a flat step
100 0.5
200 0.5
300 1
