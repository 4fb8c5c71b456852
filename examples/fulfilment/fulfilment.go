// Package fulfilment holds the activities and compensations of the example
// workflow (examples/workflow.yaml). examples/worker runs them; the CLI's
// quickstart test registers them in-process.
//
// Layering: imports client/worker and the standard library only: an example
// sees Weft through its public SDK.
package fulfilment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/weft-dev/weft/client/worker"
)

// Item is what reserve-inventory reserves and release-inventory releases.
type Item struct {
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
}

// Reservation is reserve-inventory's output.
type Reservation struct {
	ReservationID string `json:"reservation_id"`
}

// Payment is what charge-card charges and refund-card refunds.
type Payment struct {
	AmountCents int    `json:"amount_cents"`
	Currency    string `json:"currency"`
}

// Charge is charge-card's output.
type Charge struct {
	ChargeID string `json:"charge_id"`
}

// Shipment is ship-order's input and output.
type Shipment struct {
	Carrier  string `json:"carrier"`
	Tracking string `json:"tracking,omitempty"`
}

// Register registers the example's activities and compensations on w.
// Every external call would pass worker.Info(ctx).IdempotencyKey, which is
// stable across retries, so a retried attempt cannot act twice.
func Register(w *worker.Worker, log *slog.Logger) {
	worker.Register(w, "reserve-inventory", func(ctx context.Context, in Item) (Reservation, error) {
		if in.Quantity <= 0 {
			return Reservation{}, worker.Fail(worker.ClassValidation, "bad_quantity", errors.New("quantity must be positive"))
		}
		info := worker.Info(ctx)
		log.Info("reserved", "run_id", info.RunID, "sku", in.SKU, "quantity", in.Quantity)
		return Reservation{ReservationID: "rsv-" + shortKey(info.IdempotencyKey)}, nil
	})
	worker.Register(w, "charge-card", func(ctx context.Context, in Payment) (Charge, error) {
		info := worker.Info(ctx)
		if _, ok, err := worker.Upstream[Reservation](ctx, "reserve"); !ok || err != nil {
			return Charge{}, worker.Fail(worker.ClassValidation, "no_reservation", errors.New("charge needs the reservation"))
		}
		log.Info("charged", "run_id", info.RunID, "amount_cents", in.AmountCents, "currency", in.Currency)
		return Charge{ChargeID: "ch-" + shortKey(info.IdempotencyKey)}, nil
	}, worker.WithIdempotencyKey(func(in Payment) string { return fmt.Sprintf("charge-%d-%s", in.AmountCents, in.Currency) }),
		worker.WithVerify(func(ctx context.Context, key string) (worker.VerifyResult, error) {
			// A real verify asks the payment provider whether key was charged.
			return worker.VerifyResult{State: worker.VerifyIndeterminate, Diagnostic: "example: no provider to ask"}, nil
		}))
	worker.Register(w, "ship-order", func(ctx context.Context, in Shipment) (Shipment, error) {
		info := worker.Info(ctx)
		log.Info("shipped", "run_id", info.RunID, "carrier", in.Carrier)
		in.Tracking = "trk-" + shortKey(info.IdempotencyKey)
		return in, nil
	})
	worker.RegisterCompensation(w, "release-inventory", func(ctx context.Context, in Item) error {
		log.Info("released", "run_id", worker.Info(ctx).RunID, "sku", in.SKU)
		return nil
	})
	worker.RegisterCompensation(w, "refund-card", func(ctx context.Context, in Payment) error {
		log.Info("refunded", "run_id", worker.Info(ctx).RunID, "amount_cents", in.AmountCents)
		return nil
	})
}

func shortKey(key string) string {
	if len(key) > 12 {
		return key[:12]
	}
	return key
}
