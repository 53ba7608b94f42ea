package report

import "math"

// TQuantile975 is Student's t 0.975 quantile for df degrees of freedom (the
// factor of a two-sided 95 % interval), NaN for df < 1, within 1e-12: see
// TQuantile975Frac.
func TQuantile975(df int) float64 { return TQuantile975Frac(float64(df)) }

// TQuantile975Frac is Student's t 0.975 quantile for df degrees of freedom,
// which need not be whole (Welch–Satterthwaite's are not), NaN for df < 1 or
// NaN, within 1e-12: up to tHillFrom degrees of freedom the t whose upper
// tail ½·I(df/(df+t²); df/2, ½) is 0.025 (I the regularized incomplete beta
// function), found by bisection to the last bit; beyond, where the log-gamma
// terms of I would lose digits, Hill's expansion in 1/df around the normal
// quantile, whose first omitted term is below 1e-15 there.
func TQuantile975Frac(df float64) float64 {
	if !(df >= 1) {
		return math.NaN()
	}
	nu := df
	if df > tHillFrom {
		return tHill975(nu)
	}
	// The quantile falls with df from 12.706 (df 1) towards z975.
	lo, hi := z975, 12.71
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		t2 := mid * mid
		if regIncBeta(nu/2, 0.5, nu/(nu+t2), t2/(nu+t2))/2 > 0.025 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// tHillFrom is where TQuantile975 changes from the incomplete beta function
// (error about 1e-13 at 1000 degrees of freedom, growing with them) to
// Hill's expansion (error about 1e-15 at 1000, falling as df⁻⁵).
const tHillFrom = 1000

// z975 is the standard normal 0.975 quantile, t's limit.
const z975 = 1.959963984540054

// tHill975 is Hill's (1970) expansion of Student's t 0.975 quantile in
// powers of 1/nu, to the fourth.
func tHill975(nu float64) float64 {
	z := z975
	z2 := z * z
	g1 := z * (z2 + 1) / 4
	g2 := z * ((5*z2+16)*z2 + 3) / 96
	g3 := z * (((3*z2+19)*z2+17)*z2 - 15) / 384
	g4 := z * ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) / 92160
	return z + (g1+(g2+(g3+g4/nu)/nu)/nu)/nu
}

// regIncBeta is the regularized incomplete beta function I(x; a, b) for
// 0 ≤ x ≤ 1, with y = 1 − x given by the caller so that neither loses digits
// near 1: the continued fraction (modified Lentz) on whichever side of the
// mean converges fast.
func regIncBeta(a, b, x, y float64) float64 {
	switch {
	case x <= 0:
		return 0
	case y <= 0:
		return 1
	case x > (a+1)/(a+b+2):
		return 1 - regIncBeta(b, a, y, x)
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return math.Exp(a*math.Log(x)+b*math.Log(y)-(la+lb-lab)) / a * betaFraction(a, b, x)
}

// betaFraction evaluates the incomplete beta function's continued fraction
// (Numerical Recipes' betacf) until a step changes it by less than 1e-16,
// within a bound of steps that x < (a+1)/(a+b+2) never reaches for
// TQuantile975's arguments.
func betaFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	nonzero := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/nonzero(1-(a+b)*x/(a+1))
	f := d
	for m := 1.0; m <= 10_000; m++ {
		num := m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		d = 1 / nonzero(1+num*d)
		c = nonzero(1 + num/c)
		f *= d * c
		num = -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		d = 1 / nonzero(1+num*d)
		c = nonzero(1 + num/c)
		step := d * c
		f *= step
		if math.Abs(step-1) < 1e-16 {
			break
		}
	}
	return f
}
